/* test_slurm: tools/smokemorph-farm, first without a cluster (its usage,
 * its refusals, the chunk plan --dry-run prints: these run everywhere), then
 * on a real Slurm: a one-node cluster on localhost in a temporary folder
 * (munged with its own key and socket, slurmctld and slurmd from Debian's
 * slurm-wlm with a generated slurm.conf, proctrack/linuxproc, task/none).
 * On it: a 3-shot array (two shots of a --list, one scene file) and a shot
 * in 3 chunks, on the CPU backend at small grids; their frames and metrics
 * must be byte for byte those of single-machine runs. A chunk made to fail
 * stops the chain, with its reason in its log and in --wait's message;
 * submitted again, only the missing chunks run. The daemons are stopped by
 * their process ids at exit, on a signal and on a crash.
 *
 * The cluster part needs root and the packages (sh tools/install-deps.sh
 * --farm); without them it prints a SKIP line. Run from the repository root
 * (make test): the farm is tools/smokemorph-farm, the images targets/. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char bin[PATH_MAX], farm[PATH_MAX], tgt[PATH_MAX]; /* smokemorph, the farm, targets/ */
static char tmp[128], work[256];
static TestlibResult R;

#define pathf testlib_fmt

/* sh -c SCRIPT in work/, output captured in R */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char script[32768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(script, sizeof script, fmt, ap);
    va_end(ap);
    static const char *const unset[] = {"DISPLAY", "WAYLAND_DISPLAY", NULL};
    TestlibRunOpts o = {0};
    o.cwd = work;
    o.unset_env = unset;
    return testlib_run_sh(script, &o, &R);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool exists_in(const char *rel) { return testlib_exists(pathf("%s/%s", work, rel)); }

static bool same_file(const char *a, const char *b) { return testlib_same_file(a, b); }

static int diff_frames(const char *a, const char *b, int from, int to)
{
    return testlib_diff_frames(work, a, b, from, to);
}

static int count_str(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static char *read_rel(const char *rel)
{
    char *s = testlib_read_file(pathf("%s/%s", work, rel), NULL);
    if (!s && !(s = calloc(1, 1))) abort();
    return s;
}

/* ------------------------------------------------------ without a cluster */

#define SHOT "--cpu --grid 32 --steps 40 --every 5"

static void test_usage(void)
{
    CHECK(sh("%s --help", farm) == 0 && strstr(R.out, "shots") && strstr(R.out, "chunks") &&
              strstr(R.out, "--dry-run") && strstr(R.out, "--wait") && strstr(R.out, "--gres") &&
              strstr(R.out, "Exit status"),
          "--help: exit %d:\n%s", R.code, R.out);
    CHECK(sh("%s", farm) == 2 && strstr(R.err, "usage:"), "no arguments: exit %d:\n%s", R.code, R.err);
    CHECK(sh("%s render --out x", farm) == 2 && strstr(R.err, "shots or chunks"), "a bad mode: %s",
          R.err);
    CHECK(sh("%s chunks --chunks 3 -- " SHOT " a.png b.png", farm) == 2 && strstr(R.err, "--out"),
          "no --out: exit %d: %s", R.code, R.err);
    CHECK(sh("%s chunks --out o -- " SHOT " a.png b.png", farm) == 2 && strstr(R.err, "--chunks"),
          "no --chunks: %s", R.err);
    CHECK(sh("%s chunks --out o --chunks 0 -- " SHOT " a.png b.png", farm) == 2 &&
              strstr(R.err, "'0'"),
          "--chunks 0: %s", R.err);
    CHECK(sh("%s shots --out o --smokemorph %s", farm, bin) == 2 && strstr(R.err, "--list"),
          "shots without shots: %s", R.err);
    CHECK(sh("%s chunks --bogus --out o", farm) == 2 && strstr(R.err, "--bogus"), "an unknown option: %s",
          R.err);
    /* the farm's own options in the shot's, also as a prefix getopt_long takes */
    CHECK(sh("%s chunks --out o --chunks 2 --smokemorph %s -- " SHOT " --metr m.csv %s/ring.png "
             "%s/star.png",
             farm, bin, tgt, tgt) == 1 &&
              strstr(R.err, "--metr is the farm's"),
          "a shot giving --metrics: exit %d: %s", R.code, R.err);
    /* smokemorph's own refusal, before anything is queued */
    CHECK(sh("%s chunks --out o --chunks 2 --smokemorph %s -- " SHOT " --vf nope %s/ring.png %s/star.png",
             farm, bin, tgt, tgt) == 1 &&
              strstr(R.err, "smokemorph refuses") && strstr(R.err, "--vf"),
          "a bad smokemorph option: exit %d: %s", R.code, R.err);
    CHECK(sh("%s chunks --out o --chunks 2 --smokemorph %s -- --cpu --every 5 %s/ring.png %s/star.png",
             farm, bin, tgt, tgt) == 2 &&
              strstr(R.err, "--steps"),
          "chunks without --steps: %s", R.err);
    CHECK(!exists_in("o"), "a refused submission made its folder");
}

/* --dry-run: the plan (frame ranges, checkpoints, resumes, afterok), no files */
static void test_dry_run(void)
{
    int rc = sh("%s chunks --out dry --chunks 3 --partition gpu --time 10:00 --gpu --smokemorph %s "
                "--dry-run -- " SHOT " %s/ring.png %s/star.png",
                farm, bin, tgt, tgt);
    CHECK(rc == 0, "--dry-run: exit %d: %s", rc, R.err);
    /* 40 steps every 5: 8 intervals, 3 a chunk: frames 1-4, 5-7, 8-9 */
    CHECK(strstr(R.out, "--frame-range 1-4 --checkpoint-every 15") &&
              strstr(R.out, "--frame-range 5-7 --checkpoint-every 15") &&
              strstr(R.out, "--frame-range 8-9 --checkpoint-every 15") &&
              strstr(R.out, "chunk_2.csv --resume ") && strstr(R.out, "checkpoint_000015.smc") &&
              strstr(R.out, "checkpoint_000030.smc"),
          "the chunks' smokemorph commands:\n%s", R.out);
    CHECK(count_str(R.out, "sbatch --parsable") == 3 &&
              strstr(R.out, "j2=$(sbatch --parsable --dependency=afterok:$j1 ") &&
              strstr(R.out, "j3=$(sbatch --parsable --dependency=afterok:$j2 ") &&
              count_str(R.out, "--kill-on-invalid-dep=yes") == 3 &&
              count_str(R.out, "--partition=gpu") == 3 && count_str(R.out, "--gres=gpu:1") == 3 &&
              count_str(R.out, "--time=10:00") == 3,
          "the sbatch commands:\n%s", R.out);
    CHECK(!exists_in("dry"), "--dry-run wrote files");
    /* --chunk-frames and --frame-name: 4 intervals a chunk, frames named by a pattern */
    rc = sh("%s chunks --out dry --chunk-frames 4 --frame-name 'smoke.####.png' --smokemorph %s --dry-run -- " SHOT
            " %s/ring.png %s/star.png",
            farm, bin, tgt, tgt);
    CHECK(rc == 0 && count_str(R.out, "sbatch --parsable") == 2 &&
              strstr(R.out, pathf("--frames '%s/dry/frames/smoke.####.png' --frame-range 6-9 --checkpoint-every 20", work)),
          "--chunk-frames 4 --frame-name: exit %d:\n%s%s", rc, R.out, R.err);

    rc = sh("printf 'a --grid 16 %s/ring.png %s/star.png\\n# a comment\\n\\n\"b\" --grid \"16\" %s/star.png "
            "%s/ring.png\\n' >list && %s shots --out dry --list list --gres gpu:2 --max-running 1 "
            "--smokemorph %s --dry-run -- --cpu --steps 4",
            tgt, tgt, tgt, tgt, farm, bin);
    CHECK(rc == 0 && strstr(R.out, "--array=1,2%1 ") && strstr(R.out, "--gres=gpu:2") &&
              strstr(R.out, "# shot 2 b: ") && count_str(R.out, "--headless --grid 16") == 2,
          "shots --dry-run: exit %d:\n%s%s", rc, R.out, R.err);
    CHECK(sh("printf 'a --grid 16\\na --grid 24\\n' >list2 && %s shots --out dry --list list2 "
             "--smokemorph %s --dry-run",
             farm, bin) == 1 &&
              strstr(R.err, "two shots named a"),
          "two shots of one name: %s", R.err);
    CHECK(!exists_in("dry"), "--dry-run wrote files");
}

/* ------------------------------------------------------------ the cluster */

enum { MUNGED, SLURMCTLD, SLURMD, NDAEMONS };
static const char *const daemon_name[NDAEMONS] = {"munged", "slurmctld", "slurmd"};
static volatile pid_t daemon_pid[NDAEMONS];

/* the daemons, slurmd first, each SIGTERM then SIGKILL after 5 s */
static void stop_daemons(void)
{
    for (int d = NDAEMONS - 1; d >= 0; d--) {
        pid_t p = daemon_pid[d];
        if (p <= 0) continue;
        kill(p, SIGTERM);
        int st;
        bool gone = false;
        for (int t = 0; t < 100 && !gone; t++) {
            if (waitpid(p, &st, WNOHANG) == p) gone = true;
            else sleep_ms(50);
        }
        if (!gone) {
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
        }
        daemon_pid[d] = 0;
    }
}

static void on_signal(int sig)
{
    for (int d = NDAEMONS - 1; d >= 0; d--)
        if (daemon_pid[d] > 0) kill(daemon_pid[d], SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* an executable NAME in PATH, /usr/sbin or /sbin, into OUT */
static bool find_prog(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin:/usr/bin", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/%s", d, name);
        if (access(out, X_OK) == 0) return true;
    }
    return false;
}

static pid_t spawn(char *const argv[], const char *log)
{
    pid_t p = fork();
    if (p == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return p;
}

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0) close(s);
    return port;
}

static void show_log(const char *path)
{
    printf("  --- %s (its end):\n", path);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "tail -n 15 '%s' | sed 's/^/  | /'", path);
    if (testlib_sh(cmd) != 0) printf("  (cannot read it)\n");
}

static char prog[NDAEMONS][PATH_MAX];
static char cluster[200];

/* munged, slurmctld, slurmd; true when the node is idle */
static bool start_cluster(void)
{
    snprintf(cluster, sizeof cluster, "%s/cluster", tmp);
    /* munged refuses a socket in a folder others cannot search */
    if (mkdir(cluster, 0755) < 0 || chmod(tmp, 0755) < 0 || chmod(cluster, 0755) < 0 ||
        mkdir(pathf("%s/state", cluster), 0700) < 0 || mkdir(pathf("%s/spool", cluster), 0700) < 0) {
        printf("FAIL cannot make %s: %s\n", cluster, strerror(errno));
        return false;
    }
    /* the key: 1024 random bytes, 0600 */
    char key[1024];
    int fd = open("/dev/urandom", O_RDONLY);
    bool ok = fd >= 0 && read(fd, key, sizeof key) == (ssize_t)sizeof key;
    if (fd >= 0) close(fd);
    char keyf[300];
    snprintf(keyf, sizeof keyf, "%s/munge.key", cluster);
    ok = ok && testlib_write_file(keyf, key, sizeof key) == 0 && chmod(keyf, 0600) == 0;
    CHECK(ok, "cannot write the munge key");
    if (!ok) return false;

    int ctld_port = free_port(), d_port = free_port();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    char conf[4096];
    snprintf(conf, sizeof conf,
             "# test_slurm: a one-node cluster on localhost\n"
             "ClusterName=smtest\n"
             "SlurmctldHost=localhost(127.0.0.1)\n"
             "SlurmUser=root\nSlurmdUser=root\n"
             "SlurmctldPort=%d\nSlurmdPort=%d\n"
             "AuthType=auth/munge\nAuthInfo=socket=%s/munge.sock\nCredType=cred/munge\n"
             "StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool\n"
             "SlurmctldPidFile=%s/slurmctld.pid\nSlurmdPidFile=%s/slurmd.pid\n"
             "SlurmctldLogFile=%s/slurmctld.log\nSlurmdLogFile=%s/slurmd.log\n"
             "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
             "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
             "JobCompType=jobcomp/none\nMpiDefault=none\nMailProg=/bin/true\n"
             "SchedulerType=sched/builtin\n"
             "# start a job as soon as it may (the defaults wait up to 3 s)\n"
             "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0\n"
             "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
             "ReturnToService=2\n"
             "NodeName=node1 NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=%ld State=UNKNOWN\n"
             "PartitionName=test Nodes=node1 Default=YES MaxTime=INFINITE State=UP\n",
             ctld_port, d_port, cluster, cluster, cluster, cluster, cluster, cluster, cluster, cpus);
    char conff[300];
    snprintf(conff, sizeof conff, "%s/slurm.conf", cluster);
    if (testlib_write_file(conff, conf, strlen(conf)) != 0) {
        printf("FAIL cannot write %s\n", conff);
        return false;
    }
    setenv("SLURM_CONF", conff, 1); /* for sbatch, squeue, scontrol, and the daemons */

    char sock[400], keyopt[400], pidopt[400], seedopt[400], logopt[400];
    snprintf(sock, sizeof sock, "--socket=%s/munge.sock", cluster);
    snprintf(keyopt, sizeof keyopt, "--key-file=%s", keyf);
    snprintf(pidopt, sizeof pidopt, "--pid-file=%s/munged.pid", cluster);
    snprintf(seedopt, sizeof seedopt, "--seed-file=%s/munged.seed", cluster);
    snprintf(logopt, sizeof logopt, "--log-file=%s/munged.log", cluster);
    char *munged_argv[] = {prog[MUNGED], "-F", sock, keyopt, pidopt, seedopt, logopt, NULL};
    daemon_pid[MUNGED] = spawn(munged_argv, pathf("%s/munged.out", cluster));
    for (int t = 0; t < 100 && !testlib_exists(pathf("%s/munge.sock", cluster)); t++) sleep_ms(50);
    if (!testlib_exists(pathf("%s/munge.sock", cluster))) {
        CHECK(0, "munged did not make its socket within 5 s");
        show_log(pathf("%s/munged.out", cluster));
        return false;
    }
    char *ctld_argv[] = {prog[SLURMCTLD], "-D", "-i", NULL};
    daemon_pid[SLURMCTLD] = spawn(ctld_argv, pathf("%s/slurmctld.out", cluster));
    char *d_argv[] = {prog[SLURMD], "-D", "-N", "node1", NULL};
    daemon_pid[SLURMD] = spawn(d_argv, pathf("%s/slurmd.out", cluster));

    /* the node idle: at most 60 s (about 1.5 s here) */
    for (int t = 0; t < 240; t++) {
        if (sh("sinfo -h -o %%T 2>/dev/null") == 0 && strstr(R.out, "idle")) return true;
        sleep_ms(250);
    }
    CHECK(0, "the one-node cluster did not come up within 60 s (sinfo: %s%s)", R.out, R.err);
    show_log(pathf("%s/slurmctld.log", cluster));
    show_log(pathf("%s/slurmd.log", cluster));
    return false;
}

/* smokemorph directly, in work/: the single-machine reference */
static bool reference(const char *args)
{
    int rc = sh("%s -q --headless %s", bin, args);
    CHECK(rc == 0, "the reference run '%s': exit %d: %s", args, rc, R.err);
    return rc == 0;
}

/* 3 shots in one array: two of a --list, one scene file */
static void test_shots(void)
{
    const char *scene = pathf("%s/c.json", work);
    char text[9000];
    snprintf(text, sizeof text,
             "{\"grid\": [24, 24], \"fields\": [{\"start\": \"%s/heart.png\",\n"
             "  \"keys\": [{\"step\": 20, \"target\": \"%s/moon.png\"}]}]}\n",
             tgt, tgt);
    CHECK(testlib_write_file(scene, text, strlen(text)) == 0, "cannot write %s", scene);
    int rc = sh("printf '%%s\\n' '# name, then its options' 'a --grid 24 %s/ring.png %s/star.png' "
                "\"b --grid '20x28' '%s/star.png' %s/cross.png\" >shots.txt && "
                "%s shots --out shots --list shots.txt c.json --smokemorph %s --wait --poll 1 -- "
                "--cpu --steps 20 --every 5 -q",
                tgt, tgt, tgt, tgt, farm, bin);
    CHECK(rc == 0 && strstr(R.err, "submitted 3 of 3 shots") && strstr(R.err, "all 3 done"),
          "shots: exit %d:\n%s", rc, R.err);
    if (rc != 0) {
        show_log(pathf("%s/shots/logs/a.log", work));
        return;
    }
    static const char *const name[3] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++) {
        char args[9000];
        if (k == 0) snprintf(args, sizeof args, "--grid 24 %s/ring.png %s/star.png", tgt, tgt);
        if (k == 1) snprintf(args, sizeof args, "--grid 20x28 %s/star.png %s/cross.png", tgt, tgt);
        if (k == 2) snprintf(args, sizeof args, "--scene c.json");
        if (!reference(pathf("--cpu --steps 20 --every 5 %s --frames ref_%s --metrics ref_%s.csv", args,
                             name[k], name[k])))
            continue;
        CHECK(diff_frames(pathf("ref_%s", name[k]), pathf("shots/%s", name[k]), 1, 5) == 0 &&
                  !exists_in(pathf("shots/%s/frame_00006.png", name[k])),
              "shot %s: its frames are not the single-machine run's", name[k]);
        CHECK(same_file(pathf("%s/ref_%s.csv", work, name[k]),
                        pathf("%s/shots/metrics/%s.csv", work, name[k])),
              "shot %s: its metrics are not the single-machine run's", name[k]);
        char *sc = read_rel(pathf("shots/%s/run.json", name[k]));
        char *lg = read_rel(pathf("shots/logs/%s.log", name[k]));
        CHECK(strstr(sc, "\"status\": \"complete\""), "shot %s: its sidecar:\n%.300s", name[k], sc);
        CHECK(strstr(lg, pathf("shot %s: job ", name[k])) && strstr(lg, pathf("shot %s: done", name[k])),
              "shot %s: its log:\n%s", name[k], lg);
        free(sc);
        free(lg);
    }
    /* again: nothing to do, nothing queued */
    rc = sh("%s shots --out shots --list shots.txt c.json --smokemorph %s --wait --poll 1 -- "
            "--cpu --steps 20 --every 5 -q",
            farm, bin);
    CHECK(rc == 0 && strstr(R.err, "all 3 shots are done") && !strstr(R.err, "submitted"),
          "shots submitted again: exit %d:\n%s", rc, R.err);
    /* shot b lost a frame: b alone is rendered again */
    unlink(pathf("%s/shots/b/frame_00003.png", work));
    rc = sh("%s shots --out shots --list shots.txt c.json --smokemorph %s --wait --poll 1 -- "
            "--cpu --steps 20 --every 5 -q",
            farm, bin);
    CHECK(rc == 0 && strstr(R.err, "submitted 1 of 3 shots"), "shot b lost a frame: exit %d:\n%s", rc,
          R.err);
    char *lg = read_rel("shots/logs/a.log");
    CHECK(count_str(lg, "shot a: job ") == 1, "shot a rendered again:\n%s", lg);
    free(lg);
    CHECK(diff_frames("ref_b", "shots/b", 1, 5) == 0, "shot b rendered again: frames differ");
}

/* A shot with --checkpoint-every, stopped (a stand-in smokemorph renders
 * frames 1-5, steps 0..200, with their checkpoints, then exits 143 as a time
 * limit would leave it), submitted again: it resumes from its last
 * checkpoint, and its frames and metrics (the two attempts' put together)
 * are one run's */
static void test_shots_resume(void)
{
    char fake[16384];
    snprintf(fake, sizeof fake,
             "#!/bin/sh\n"
             "case \" $* \" in *' --resume '* | *' --dump-scene '*) exec %s \"$@\" ;; esac\n"
             "%s \"$@\" --frame-range 1-5 || exit $?\n"
             "echo 'smokemorph: interrupted by SIGTERM at step 230 (a stand-in)' >&2\n"
             "exit 143\n",
             bin, bin);
    const char *fakef = pathf("%s/stop/smokemorph", work);
    CHECK(mkdir(pathf("%s/stop", work), 0755) == 0 && testlib_write_file(fakef, fake, strlen(fake)) == 0 &&
              chmod(fakef, 0755) == 0,
          "cannot write %s", fakef);
    char shot[9000];
    snprintf(shot, sizeof shot, "--cpu --grid 32 --steps 400 --every 50 %s/ring.png %s/star.png", tgt, tgt);
    int rc = sh("echo 'r %s' >resume.txt && %s shots --out res --list resume.txt --checkpoint-every 100 "
                "--smokemorph stop/smokemorph --wait --poll 1",
                shot, farm);
    CHECK(rc == 1 && strstr(R.err, "FAILED: shot r") && strstr(R.err, "stopped by SIGTERM"),
          "a stopped shot: exit %d:\n%s", rc, R.err);
    CHECK(exists_in("res/r/checkpoints/checkpoint_000200.smc") && !exists_in("res/r/frame_00006.png"),
          "the stopped shot left no checkpoint at step 200, or went on");
    rc = sh("%s shots --out res --list resume.txt --checkpoint-every 100 --smokemorph %s --wait --poll 1", farm,
            bin);
    CHECK(rc == 0 && strstr(R.err, "all 1 done"), "the stopped shot submitted again: exit %d:\n%s", rc, R.err);
    char *lg = read_rel("res/logs/r.log");
    CHECK(strstr(lg, "checkpoints/checkpoint_000200.smc") && strstr(lg, "resumed at step 200"),
          "the shot did not resume from its last checkpoint:\n%s", lg);
    free(lg);
    if (reference(pathf("%s --frames ref_r --metrics ref_r.csv", shot))) {
        CHECK(diff_frames("ref_r", "res/r", 1, 9) == 0, "the resumed shot's frames are not one run's");
        CHECK(same_file(pathf("%s/ref_r.csv", work), pathf("%s/res/metrics/r.csv", work)),
              "the resumed shot's metrics are not one run's");
    }
}

/* One shot in 3 chunks: first with chunk 2 made to fail (a smokemorph that
 * exits 1 with a reason for its frame range), then submitted again */
static void test_chunks(void)
{
    char shot[9000];
    snprintf(shot, sizeof shot, SHOT " %s/ring.png %s/star.png", tgt, tgt);
    char fake[8192];
    snprintf(fake, sizeof fake,
             "#!/bin/sh\n"
             "case \" $* \" in *' --frame-range 5-7 '*)\n"
             "  echo 'smokemorph: export: cannot write frame_00005.png: No space left on device' >&2; exit 1 ;;\n"
             "esac\n"
             "exec %s \"$@\"\n",
             bin);
    const char *fakef = pathf("%s/fake/smokemorph", work);
    CHECK(mkdir(pathf("%s/fake", work), 0755) == 0 && testlib_write_file(fakef, fake, strlen(fake)) == 0 &&
              chmod(fakef, 0755) == 0,
          "cannot write %s", fakef);
    int rc = sh("%s chunks --out long --chunks 3 --smokemorph fake/smokemorph --wait --poll 1 -- %s", farm,
                shot);
    CHECK(rc == 1 && strstr(R.err, "FAILED: chunk 2 of 3 (frames 5-7)") &&
              strstr(R.err, "No space left on device") && strstr(R.err, "logs/chunk_2.log") &&
              strstr(R.err, "NOT RUN: chunk 3 of 3 (frames 8-9)"),
          "a failing chunk: exit %d (want 1):\n%s", rc, R.err);
    char *lg = read_rel("long/logs/chunk_2.log");
    CHECK(strstr(lg, "No space left on device") &&
              strstr(lg, "chunk 2 of 3 (frames 5-7) FAILED: exit 1") &&
              strstr(lg, "chunks 3..3 will not run"),
          "chunk 2's log does not say why it failed and what it stops:\n%s", lg);
    free(lg);
    CHECK(!exists_in("long/logs/chunk_3.log") && !exists_in("long/frames/frame_00008.png"),
          "chunk 3 ran after chunk 2 failed");
    CHECK(exists_in("long/frames/frame_00004.png") && exists_in("long/checkpoints/checkpoint_000015.smc"),
          "chunk 1 left no frames or no checkpoint");

    /* again, with the real smokemorph: chunks 2 and 3 only */
    rc = sh("%s chunks --out long --chunks 3 --smokemorph %s --wait --poll 1 -- %s", farm, bin, shot);
    CHECK(rc == 0 && !strstr(R.err, "chunk 1 of 3") && strstr(R.err, "submitted chunk 2 of 3") &&
              strstr(R.err, "submitted chunk 3 of 3") && strstr(R.err, "all 2 done"),
          "submitted again: exit %d:\n%s", rc, R.err);
    lg = read_rel("long/logs/chunk_1.log");
    CHECK(count_str(lg, "chunk 1 of 3 (frames 1-4): job ") == 1, "chunk 1 rendered twice:\n%s", lg);
    free(lg);
    lg = read_rel("long/logs/chunk_3.log");
    CHECK(strstr(lg, "--resume ") && strstr(lg, "checkpoint_000030.smc") &&
              strstr(lg, "resumed at step 30"),
          "chunk 3 did not resume from chunk 2's checkpoint:\n%s", lg);
    free(lg);

    /* the frames and the metrics of one uninterrupted run */
    if (reference(pathf("%s --frames ref_long --metrics ref_long.csv", shot))) {
        CHECK(diff_frames("ref_long", "long/frames", 1, 9) == 0 && !exists_in("long/frames/frame_00010.png"),
              "the chunks' frames are not one run's");
        CHECK(same_file(pathf("%s/ref_long.csv", work), pathf("%s/long/metrics.csv", work)),
              "the chunks' metrics are not one run's");
    }
    /* a third time: all done */
    rc = sh("%s chunks --out long --chunks 3 --smokemorph %s -- %s", farm, bin, shot);
    CHECK(rc == 0 && strstr(R.err, "all 3 chunks are done") && !strstr(R.err, "submitted"),
          "submitted a third time: exit %d:\n%s", rc, R.err);
    /* another split of the same folder is refused */
    rc = sh("%s chunks --out long --chunks 2 --smokemorph %s -- %s", farm, bin, shot);
    CHECK(rc == 1 && strstr(R.err, "another shot or split"), "another split: exit %d:\n%s", rc, R.err);
}

int main(void)
{
    if (!realpath(testlib_bin(), bin) || !realpath("tools/smokemorph-farm", farm) ||
        !realpath("targets", tgt)) {
        printf("FAIL cannot find %s, tools/smokemorph-farm or targets/ (run from the repository root): %s\n"
               "0 passed, 1 failed\n",
               testlib_bin(), strerror(errno));
        return 1;
    }
    testlib_tmpdir(tmp, sizeof tmp, "test_slurm");
    snprintf(work, sizeof work, "%s/work", tmp);
    if (mkdir(work, 0755) < 0) {
        perror(work);
        return 2;
    }
    RUN(test_usage);
    RUN(test_dry_run);

    const char *why = NULL;
    if (geteuid() != 0) why = "not root (the test starts slurmctld, slurmd and munged)";
    for (int d = 0; d < NDAEMONS && !why; d++)
        if (!find_prog(daemon_name[d], prog[d], sizeof prog[d]))
            why = pathf("no %s: the packages slurm-wlm and munge are not installed "
                        "(sh tools/install-deps.sh --farm)", daemon_name[d]);
    char tool[PATH_MAX];
    static const char *const tools[] = {"sbatch", "squeue", "sinfo", "scontrol"};
    for (size_t t = 0; t < sizeof tools / sizeof *tools && !why; t++)
        if (!find_prog(tools[t], tool, sizeof tool))
            why = pathf("no %s: the package slurm-client is not installed (sh tools/install-deps.sh --farm)",
                        tools[t]);
    if (why) {
        printf("SKIP test_slurm on a real Slurm: %s\n", why);
    } else if (check_skipped("test_shots") && check_skipped("test_shots_resume") &&
               check_skipped("test_chunks")) {
        /* TEST_ONLY left out the cluster's tests */
    } else {
        atexit(stop_daemons);
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE};
        for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) signal(sigs[k], on_signal);
        double t0 = check_now();
        if (start_cluster()) {
            printf("(the cluster came up in %.1f s)\n", check_now() - t0);
            RUN(test_shots);
            RUN(test_shots_resume);
            RUN(test_chunks);
        }
        stop_daemons();
        /* nothing of Slurm's left behind: no job still running */
        for (int d = 0; d < NDAEMONS; d++) CHECK(daemon_pid[d] == 0, "%s not stopped", daemon_name[d]);
    }
    testlib_rm_rf(tmp);
    testlib_result_free(&R);
    return check_done();
}
