# smokemorph — see README.md.  `make`, `make test`, `make test-asan`,
# `make targets`, `make install PREFIX=/usr/local DESTDIR=`, `make clean`,
# `make fuzz` (libFuzzer harnesses, clang) and `make fuzz-run` (45 s each).

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
PKGS    := glew glut libpng egl gl zlib jansson freetype2
VERSION := 0.1.0

# OpenEXR: only its C library, OpenEXRCore (the .pc file lists the C++ ones
# too, which the build does not need): its headers from pkg-config, and
# -lOpenEXRCore<suffix> from the .pc file's own libdir and libsuffix.
EXR_PKG    := OpenEXR
EXR_CFLAGS := $(shell pkg-config --cflags $(EXR_PKG) 2>/dev/null)
EXR_LIBS   := $(shell pkg-config --exists $(EXR_PKG) 2>/dev/null && \
                echo -L$$(pkg-config --variable=libdir $(EXR_PKG)) \
                     -lOpenEXRCore$$(pkg-config --variable=libsuffix $(EXR_PKG)))

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(EXR_CFLAGS)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(EXR_LIBS)

OPT      ?= -O2
CFLAGS   ?=
CPPFLAGS += -DSMOKEMORPH_VERSION='"$(VERSION)"' -DSMOKEMORPH_DATADIR='"$(PREFIX)/share/smokemorph"'
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -Wall -Wextra -Werror $(OPT) $(OPT_FILE) -g \
             -MMD -MP $(PKG_CFLAGS) $(SAN) $(CFLAGS)
LDLIBS  += $(PKG_LIBS) -lm

LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/src/%.o)
LIB      := $(BUILD)/libsmokemorph.a
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TESTLIB  := $(BUILD)/tests/testlib.o
TOOL_SRC := $(wildcard tools/*.c)
TOOL_BIN := $(TOOL_SRC:tools/%.c=$(BUILD)/tools/%)
SHADERS  := $(wildcard shaders/*.glsl)

# keep object files: they are the pattern chain's intermediates
.SECONDARY:

.PHONY: all options-doc test test-asan tests tools targets install uninstall clean check-deps fuzz fuzz-run

all: $(BUILD)/smokemorph $(BUILD)/smokemorph.bash tools $(if $(filter build,$(BUILD)),smokemorph)

smokemorph: $(BUILD)/smokemorph
	cp $< $@

$(BUILD)/smokemorph: $(BUILD)/src/main.o $(LIB) $(SHADERS)
	$(CC) $(ALL_CFLAGS) -o $@ $(BUILD)/src/main.o $(LIB) $(LDLIBS)

# The manual's option block and the man page's option lists, from the
# binary's --help (whose option lines come from src/settings.def), and the
# scene fuzzer's dictionary's settings, below its "generated" line, from the
# table's scene keys (tools/scene_dict); test_docs checks that they agree.
options-doc: $(BUILD)/smokemorph $(BUILD)/tools/scene_dict
	sh tools/options-doc.sh $(BUILD)/smokemorph docs/MANUAL.md
	sh tools/options-man.sh $(BUILD)/smokemorph smokemorph.1
	grep -q '^# generated from src/settings.def' fuzz/scene.dict
	{ sed '/^# generated from src\/settings.def/q' fuzz/scene.dict && $(BUILD)/tools/scene_dict; } > fuzz/scene.dict.tmp
	mv fuzz/scene.dict.tmp fuzz/scene.dict

# bash completion, generated from the binary's --help (tools/gen-completion.sh)
$(BUILD)/smokemorph.bash: $(BUILD)/smokemorph tools/gen-completion.sh
	sh tools/gen-completion.sh $(BUILD)/smokemorph > $@.tmp && mv $@.tmp $@

$(LIB): $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The CPU solver's grid loops vectorize at -O3 (a lane does the same IEEE
# operation as the scalar code, and nothing is reassociated: the same bits;
# 1.2x faster on the tests' 128² morphs). CFLAGS still comes last.
$(BUILD)/src/cpu_solver.o: OPT_FILE = -O3

$(BUILD)/src/%.o: src/%.c | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Isrc -Itests -c -o $@ $<

# every test program links the test library (tests/testlib.c, not a test itself)
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TESTLIB) $(LIB) $(LDLIBS)

$(BUILD)/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Isrc -c -o $@ $<

$(BUILD)/tools/%: $(BUILD)/tools/%.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)

tools: $(TOOL_BIN)
tests: $(TEST_BIN) $(BUILD)/smokemorph $(BUILD)/smokemorph.bash $(TOOL_BIN)

check-deps:
	@pkg-config --exists $(PKGS) $(EXR_PKG) || { echo "smokemorph: missing build dependencies ($(PKGS) $(EXR_PKG)); run tools/install-deps.sh" >&2; exit 1; }

test: tests
	@sh tests/run.sh $(BUILD)

test-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' tests
	@ASAN_OPTIONS=detect_leaks=0 sh tests/run.sh build-asan

targets: $(BUILD)/tools/mktargets
	sh tools/make-targets.sh $(BUILD)/tools/mktargets targets

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/smokemorph/shaders $(DESTDIR)$(PREFIX)/share/smokemorph/targets
	install -m 755 $(BUILD)/smokemorph $(DESTDIR)$(PREFIX)/bin/smokemorph
	install -m 755 tools/smokemorph-farm $(DESTDIR)$(PREFIX)/bin/smokemorph-farm
	if [ -n "$(SHADERS)" ]; then install -m 644 $(SHADERS) $(DESTDIR)$(PREFIX)/share/smokemorph/shaders/; fi
	install -m 644 targets/*.png $(DESTDIR)$(PREFIX)/share/smokemorph/targets/
	install -d $(DESTDIR)$(PREFIX)/share/smokemorph/lessons
	install -m 644 lessons/*.json $(DESTDIR)$(PREFIX)/share/smokemorph/lessons/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 smokemorph.1 $(DESTDIR)$(PREFIX)/share/man/man1/smokemorph.1
	install -m 644 $(BUILD)/smokemorph.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/smokemorph

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/smokemorph $(DESTDIR)$(PREFIX)/bin/smokemorph-farm
	rm -rf $(DESTDIR)$(PREFIX)/share/smokemorph
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/smokemorph.1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions/smokemorph

# libFuzzer harnesses (fuzz/fuzz_*.c) over the GL-free modules, with ASan and
# UBSan, built with clang into $(FUZZ_BUILD)/; fuzz/run.sh runs each for
# FUZZ_SECONDS from the committed corpus fuzz/corpus/NAME/, with libFuzzer's
# seed FUZZ_SEED (1: the same run every time; 0: a random one).
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 45
FUZZ_SEED    ?= 1
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -Wall -Wextra -Werror -O1 -g \
                -fno-omit-frame-pointer $(FUZZ_SAN) $(shell pkg-config --cflags libpng jansson 2>/dev/null) \
                $(EXR_CFLAGS)
FUZZ_LIB_OBJ := $(patsubst src/%.c,$(FUZZ_BUILD)/src/%.o,src/image.c src/config.c src/method.c src/log.c \
                src/checkpoint.c src/exr.c src/pool.c src/scene.c src/compare_spec.c src/viewfield.c \
                src/cpu_solver.c src/budget.c)
FUZZ_BIN     := $(patsubst fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard fuzz/fuzz_*.c))

fuzz: $(FUZZ_BIN)

$(FUZZ_BUILD)/src/%.o: src/%.c $(wildcard src/*.h src/*.def)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# an archive, so each harness links only the modules it reaches (the
# config fuzzer: no solver)
$(FUZZ_BUILD)/libfuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_BUILD)/libfuzz.a
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Isrc -o $@ $< $(FUZZ_BUILD)/libfuzz.a \
		$(shell pkg-config --libs libpng zlib jansson 2>/dev/null) $(EXR_LIBS) -lm

fuzz-run: fuzz
	SEED=$(FUZZ_SEED) sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz smokemorph

-include $(wildcard $(BUILD)/src/*.d $(BUILD)/tests/*.d $(BUILD)/tools/*.d)
