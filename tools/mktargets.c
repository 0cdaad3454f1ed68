/* mktargets: draw density images (white = smoke = 1 on black = 0) for smokemorph.
 *
 *   mktargets -o star.png --size 256x256 --blur 2 star:0.5,0.52,0.3,0.13,5
 *   mktargets -o moon.png disc:0.5,0.5,0.3 disc:0.62,0.42,0.26:sub
 *   mktargets -o hi.png text:0.5,0.5,0.3,HI
 *
 * Shapes are drawn in order into one float image, each anti-aliased by
 * supersampling (N x N samples per pixel), then the whole image is optionally
 * softened by a Gaussian and written as an 8-bit grey PNG. Coordinates are in
 * units of the image's shorter side, so a spec draws the same picture at any
 * resolution: (0,0) is the top-left corner, y grows downwards.
 *
 * The text font is our own: each glyph is a few polylines on a 4 x 6 grid,
 * drawn as strokes with round caps (capsules) of a width relative to the
 * height, so it scales smoothly.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

#define TAG "mktargets"
#define PI 3.14159265358979323846

/* ---------------------------------------------------------------- errors */

/* One line "mktargets: ..." on stderr, then exit 1. */
static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", TAG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fail("out of memory");
    return p;
}

/* ------------------------------------------------------------------ font */

/* A glyph: its skeleton width on the grid (height is always 6) and its
 * strokes, polylines separated by ';', points "x,y" separated by spaces.
 * A polyline of one point (or two equal points) is a dot. */
typedef struct {
    char ch;
    float width;
    const char *strokes;
} Glyph;

#define GLYPH_GRID_H 6.0

static const Glyph font[] = {
    {'A', 4, "0,6 2,0 4,6; 0.75,3.9 3.25,3.9"},
    {'B', 4, "0,0 0,6; 0,0 2.8,0 3.7,0.8 3.7,2.2 2.8,3 0,3; 2.8,3 4,3.9 4,5.1 3,6 0,6"},
    {'C', 4, "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5"},
    {'D', 4, "0,0 0,6 2.4,6 4,4.4 4,1.6 2.4,0 0,0"},
    {'E', 4, "4,0 0,0 0,6 4,6; 0,3 3,3"},
    {'F', 4, "4,0 0,0 0,6; 0,3 3,3"},
    {'G', 4, "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5 4,3.5 2.2,3.5"},
    {'H', 4, "0,0 0,6; 4,0 4,6; 0,3 4,3"},
    {'I', 2, "0,0 2,0; 1,0 1,6; 0,6 2,6"},
    {'J', 4, "1.5,0 4,0; 4,0 4,5 3,6 1,6 0,5"},
    {'K', 4, "0,0 0,6; 4,0 0,4; 1.4,2.8 4,6"},
    {'L', 4, "0,0 0,6 4,6"},
    {'M', 5, "0,6 0,0 2.5,3.5 5,0 5,6"},
    {'N', 4, "0,6 0,0 4,6 4,0"},
    {'O', 4, "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0"},
    {'P', 4, "0,6 0,0 3,0 4,1 4,2.2 3,3.2 0,3.2"},
    {'Q', 4, "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0; 2.4,4.4 4,6.2"},
    {'R', 4, "0,6 0,0 3,0 4,1 4,2 3,3 0,3; 2,3 4,6"},
    {'S', 4, "4,1 3,0 1,0 0,1 0,2 1,3 3,3 4,4 4,5 3,6 1,6 0,5"},
    {'T', 4, "0,0 4,0; 2,0 2,6"},
    {'U', 4, "0,0 0,5 1,6 3,6 4,5 4,0"},
    {'V', 4, "0,0 2,6 4,0"},
    {'W', 5, "0,0 1.1,6 2.5,2 3.9,6 5,0"},
    {'X', 4, "0,0 4,6; 4,0 0,6"},
    {'Y', 4, "0,0 2,3 4,0; 2,3 2,6"},
    {'Z', 4, "0,0 4,0 0,6 4,6"},
    {'0', 4, "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0; 3.6,1 0.4,5"},
    {'1', 4, "0.8,1.2 2.2,0 2.2,6; 0.8,6 3.6,6"},
    {'2', 4, "0,1 1,0 3,0 4,1 4,2.2 0,6 4,6"},
    {'3', 4, "0,1 1,0 3,0 4,1 4,2 3,3 1.6,3; 3,3 4,4 4,5 3,6 1,6 0,5"},
    {'4', 4, "3,6 3,0 0,4.2 4,4.2"},
    {'5', 4, "4,0 0.3,0 0,3 3,3 4,4 4,5 3,6 1,6 0,5"},
    {'6', 4, "3.6,0 2,0 0,2 0,5 1,6 3,6 4,5 4,4 3,3 0,3"},
    {'7', 4, "0,0 4,0 1.4,6"},
    {'8', 4, "1,3 0,2 0,1 1,0 3,0 4,1 4,2 3,3 1,3 0,4 0,5 1,6 3,6 4,5 4,4 3,3"},
    {'9', 4, "4,3 1,3 0,2 0,1 1,0 3,0 4,1 4,4 2,6 0.4,6"},
    {' ', 2.5f, ""},
    {'.', 0, "0,6"},
    {',', 0.6f, "0.6,6 0,7.2"},
    {'!', 0, "0,0 0,4; 0,6"},
    {'?', 4, "0,1 1,0 3,0 4,1 4,2 2,3.4 2,4; 2,6"},
    {'-', 3, "0,3.2 3,3.2"},
    {'+', 4, "0,3 4,3; 2,1 2,5"},
    {'=', 4, "0,2 4,2; 0,4 4,4"},
    {':', 0, "0,2; 0,6"},
    {'\'', 0, "0,0 0,1.6"},
    {'/', 4, "0,6 4,0"},
};

static const Glyph *font_glyph(char c)
{
    c = (char)toupper((unsigned char)c);
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].ch == c)
            return &font[i];
    return NULL;
}

/* ---------------------------------------------------------------- shapes */

typedef enum {
    SHAPE_DISC,
    SHAPE_RING,
    SHAPE_ELLIPSE,
    SHAPE_RECT,
    SHAPE_RECT_OUTLINE,
    SHAPE_POLYGON, /* also star */
    SHAPE_STROKES, /* line and text: capsules */
    SHAPE_HEART
} ShapeKind;

typedef struct {
    ShapeKind kind;
    double p[8];    /* kind-specific numbers, see shape_inside() */
    double *pts;    /* polygon: x,y pairs; strokes: x0,y0,x1,y1 per segment */
    int npts;       /* polygon vertices or stroke segments */
    double value;   /* density multiplier */
    bool carve;     /* multiply what is there by 1 - value * coverage */
    double bx0, by0, bx1, by1; /* bounding box, units */
} Shape;

/* One line per shape for --help; parse_shape() checks the same names. */
static const char *const shape_help[] = {
    "disc:CX,CY,R                     filled circle",
    "ring:CX,CY,R,WIDTH               annulus, stroke centred on radius R",
    "ellipse:CX,CY,RX,RY[,DEG]        filled ellipse, rotated DEG clockwise",
    "rect:X0,Y0,X1,Y1                 filled rectangle (corners)",
    "rect-outline:X0,Y0,X1,Y1,WIDTH   rectangle outline, stroke centred on the edges",
    "star:CX,CY,ROUTER,RINNER,POINTS  star, one point straight up",
    "polygon:X1,Y1,X2,Y2,X3,Y3,...    filled polygon (nonzero winding)",
    "line:X0,Y0,X1,Y1,WIDTH           thick line with round ends",
    "heart:CX,CY,R                    heart, R = half its width, centred on its box",
    "text:CX,CY,HEIGHT,STRING         text centred on CX,CY; HEIGHT = capital height",
    NULL,
};

/* Heart: (x^2 + y^2 - 1)^3 - x^2 y^3 <= 0, y up. Its box, found once by
 * sampling: x in [-hx, hx], y in [hy0, hy1]. */
static bool heart_raw(double x, double y)
{
    double a = x * x + y * y - 1.0;
    return a * a * a - x * x * y * y * y <= 0.0;
}

static void heart_box(double *hx, double *hy0, double *hy1)
{
    static bool done;
    static double bx, by0, by1;
    if (!done) {
        const int n = 1200;
        bx = 0;
        by0 = 0;
        by1 = 0;
        for (int j = 0; j <= n; j++) {
            for (int i = 0; i <= n; i++) {
                double x = -1.5 + 3.0 * i / n, y = -1.5 + 3.0 * j / n;
                if (!heart_raw(x, y))
                    continue;
                if (fabs(x) > bx)
                    bx = fabs(x);
                if (y < by0)
                    by0 = y;
                if (y > by1)
                    by1 = y;
            }
        }
        done = true;
    }
    *hx = bx;
    *hy0 = by0;
    *hy1 = by1;
}

static double seg_dist2(const double *s, double x, double y)
{
    double dx = s[2] - s[0], dy = s[3] - s[1];
    double len2 = dx * dx + dy * dy;
    double t = 0.0;
    if (len2 > 0.0) {
        t = ((x - s[0]) * dx + (y - s[1]) * dy) / len2;
        t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    }
    double ex = s[0] + t * dx - x, ey = s[1] + t * dy - y;
    return ex * ex + ey * ey;
}

static bool in_polygon(const double *v, int n, double x, double y)
{
    int wn = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        double x0 = v[2 * j], y0 = v[2 * j + 1], x1 = v[2 * i], y1 = v[2 * i + 1];
        double side = (x1 - x0) * (y - y0) - (x - x0) * (y1 - y0);
        if (y0 <= y) {
            if (y1 > y && side > 0.0)
                wn++;
        } else if (y1 <= y && side < 0.0) {
            wn--;
        }
    }
    return wn != 0;
}

static bool in_rect(double x0, double y0, double x1, double y1, double x, double y)
{
    return x >= x0 && x < x1 && y >= y0 && y < y1;
}

/* Is the point (x, y), in units, inside the shape? */
static bool shape_inside(const Shape *s, double x, double y)
{
    const double *p = s->p;
    switch (s->kind) {
    case SHAPE_DISC: {
        double dx = x - p[0], dy = y - p[1];
        return dx * dx + dy * dy <= p[2] * p[2];
    }
    case SHAPE_RING: {
        double dx = x - p[0], dy = y - p[1], d2 = dx * dx + dy * dy;
        double r0 = p[2] - p[3] / 2, r1 = p[2] + p[3] / 2;
        return d2 <= r1 * r1 && (r0 <= 0.0 || d2 >= r0 * r0);
    }
    case SHAPE_ELLIPSE: {
        /* p: cx, cy, rx, ry, cos, sin */
        double dx = x - p[0], dy = y - p[1];
        double u = dx * p[4] + dy * p[5], v = -dx * p[5] + dy * p[4];
        return (u * u) / (p[2] * p[2]) + (v * v) / (p[3] * p[3]) <= 1.0;
    }
    case SHAPE_RECT:
        return in_rect(p[0], p[1], p[2], p[3], x, y);
    case SHAPE_RECT_OUTLINE: {
        double h = p[4] / 2;
        return in_rect(p[0] - h, p[1] - h, p[2] + h, p[3] + h, x, y) &&
               !in_rect(p[0] + h, p[1] + h, p[2] - h, p[3] - h, x, y);
    }
    case SHAPE_POLYGON:
        return in_polygon(s->pts, s->npts, x, y);
    case SHAPE_STROKES: {
        /* p[0]: stroke half-width */
        double r2 = p[0] * p[0];
        for (int i = 0; i < s->npts; i++)
            if (seg_dist2(s->pts + 4 * i, x, y) <= r2)
                return true;
        return false;
    }
    case SHAPE_HEART:
        /* p: origin x, origin y (heart's (0,0)), scale */
        return heart_raw((x - p[0]) / p[2], -(y - p[1]) / p[2]);
    }
    return false;
}

/* Draw one shape into im: coverage from aa x aa samples per pixel, combined
 * by max (or sum when add), or carved. */
static void shape_draw(const Shape *s, Image *im, int aa, bool add)
{
    double S = im->w < im->h ? im->w : im->h;
    int x0 = (int)floor(s->bx0 * S) - 1, x1 = (int)ceil(s->bx1 * S) + 1;
    int y0 = (int)floor(s->by0 * S) - 1, y1 = (int)ceil(s->by1 * S) + 1;
    if (x0 < 0)
        x0 = 0;
    if (y0 < 0)
        y0 = 0;
    if (x1 > im->w)
        x1 = im->w;
    if (y1 > im->h)
        y1 = im->h;
    for (int py = y0; py < y1; py++) {
        for (int px = x0; px < x1; px++) {
            int hits = 0;
            for (int j = 0; j < aa; j++) {
                double y = (py + (j + 0.5) / aa) / S;
                for (int i = 0; i < aa; i++)
                    hits += shape_inside(s, (px + (i + 0.5) / aa) / S, y);
            }
            if (!hits)
                continue;
            float c = (float)(s->value * hits / (aa * aa));
            float *d = &im->px[(size_t)py * im->w + px];
            if (s->carve)
                *d *= 1.0f - c;
            else if (add)
                *d = *d + c > 1.0f ? 1.0f : *d + c;
            else if (c > *d)
                *d = c;
        }
    }
}

/* Lay out STRING as stroke segments: capital height h, stroke width w * h,
 * centred on (cx, cy). Returns -1 with *bad set on a character with no glyph. */
static int text_layout(Shape *s, double cx, double cy, double h, double w, const char *str,
                       char *bad)
{
    double t = w * h, k = (h - t) / GLYPH_GRID_H, gap = 0.2 * h;
    int nseg = 0;
    double total = 0.0;
    for (const char *c = str; *c; c++) {
        const Glyph *g = font_glyph(*c);
        if (!g) {
            *bad = *c;
            return -1;
        }
        for (const char *q = g->strokes; *q; q++)
            nseg += (*q == ' ' || *q == ';') ? 1 : 0;
        nseg += 1;
        total += g->width * k + t + (c[1] ? gap : 0.0);
    }
    s->pts = xmalloc(sizeof(double) * 4 * (size_t)nseg);
    s->npts = 0;
    double left = cx - total / 2, top = cy - h / 2;
    for (const char *c = str; *c; c++) {
        const Glyph *g = font_glyph(*c);
        double ox = left + t / 2, oy = top + t / 2;
        const char *q = g->strokes;
        while (*q) {
            /* one polyline, up to ';': segments between its points, a dot if alone */
            double px = 0, py = 0;
            int n = 0;
            while (*q && *q != ';') {
                char *end;
                double gx = strtod(q, &end);
                double gy = strtod(end + 1, &end);
                double ux = ox + gx * k, uy = oy + gy * k;
                q = end + strspn(end, " ");
                if (n > 0 || *q == ';' || !*q) {
                    double *seg = s->pts + 4 * s->npts++;
                    seg[0] = n > 0 ? px : ux;
                    seg[1] = n > 0 ? py : uy;
                    seg[2] = ux;
                    seg[3] = uy;
                }
                px = ux;
                py = uy;
                n++;
            }
            if (*q == ';')
                q++;
            q += strspn(q, " ");
        }
        left += g->width * k + t + gap;
    }
    s->p[0] = t / 2;
    s->bx0 = cx - total / 2;
    s->bx1 = cx + total / 2;
    s->by0 = top;
    s->by1 = top + h + 2 * k; /* room for descenders (',' and 'Q') */
    return 0;
}

/* ----------------------------------------------------------------- parse */

static double parse_num(const char *shape, const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        fail("%s: %s: expected a number, got '%s'", shape, what, s);
    return v;
}

/* Split a comma list into at most max numbers; returns the count. */
static int parse_nums(const char *shape, const char *list, double *out, int max)
{
    int n = 0;
    const char *p = list;
    if (!*p)
        return 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (n == max)
            fail("%s: too many numbers in '%s'", shape, list);
        char buf[64];
        if (len >= sizeof buf)
            fail("%s: number too long in '%s'", shape, list);
        memcpy(buf, p, len);
        buf[len] = '\0';
        out[n++] = parse_num(shape, buf, "coordinate");
        if (!p[len])
            return n;
        p += len + 1;
    }
}

static void need(const char *name, int got, int lo, int hi, const char *args)
{
    if (got < lo || got > hi)
        fail("%s: expected %s, got %d number%s", name, args, got, got == 1 ? "" : "s");
}

static void positive(const char *name, const char *what, double v)
{
    if (!(v > 0.0))
        fail("%s: %s must be > 0, got %g", name, what, v);
}

/* Parse one SHAPE spec "name:args[:v=F][:sub][:w=F]" into s. Exits on error. */
static void parse_shape(const char *spec, Shape *s)
{
    memset(s, 0, sizeof *s);
    s->value = 1.0;
    const char *colon = strchr(spec, ':');
    if (!colon)
        fail("'%s': expected NAME:ARGS (see --help)", spec);
    size_t nlen = (size_t)(colon - spec);
    char name[32];
    if (nlen >= sizeof name)
        fail("unknown shape '%.*s' (see --help)", (int)nlen, spec);
    memcpy(name, spec, nlen);
    name[nlen] = '\0';

    /* strip modifiers from the end */
    char *args = xmalloc(strlen(colon + 1) + 1);
    strcpy(args, colon + 1);
    double weight = 0.16;
    bool have_weight = false;
    for (;;) {
        char *m = strrchr(args, ':');
        if (!m)
            break;
        if (!strcmp(m + 1, "sub")) {
            s->carve = true;
        } else if (!strncmp(m + 1, "v=", 2)) {
            s->value = parse_num(name, m + 3, "v=");
            if (s->value < 0.0 || s->value > 1.0)
                fail("%s: v= must be in [0, 1], got %g", name, s->value);
        } else if (!strncmp(m + 1, "w=", 2)) {
            weight = parse_num(name, m + 3, "w=");
            have_weight = true;
            if (!(weight > 0.0 && weight <= 0.5))
                fail("%s: w= must be in (0, 0.5], got %g", name, weight);
        } else {
            break;
        }
        *m = '\0';
    }
    if (have_weight && strcmp(name, "text"))
        fail("%s: w= applies only to text", name);

    double v[64];
    int n;
    const double *p = s->p;
    if (!strcmp(name, "text")) {
        /* three numbers, then the rest is the string */
        const char *q = args;
        for (int i = 0; i < 3; i++) {
            q = strchr(q, ',');
            if (!q)
                fail("text: expected CX,CY,HEIGHT,STRING, got '%s'", args);
            q++;
        }
        char *str = (char *)q;
        str[-1] = '\0';
        n = parse_nums(name, args, v, 3);
        need(name, n, 3, 3, "CX,CY,HEIGHT,STRING");
        positive(name, "HEIGHT", v[2]);
        if (!*str)
            fail("text: empty STRING");
        char bad = 0;
        s->kind = SHAPE_STROKES;
        if (text_layout(s, v[0], v[1], v[2], weight, str, &bad) < 0)
            fail("text: no glyph for '%c' (A-Z, 0-9, space and .,!?-+=:'/)", bad);
        free(args);
        return;
    }

    n = parse_nums(name, args, v, (int)(sizeof v / sizeof v[0]));
    free(args);
    if (!strcmp(name, "disc")) {
        need(name, n, 3, 3, "CX,CY,R");
        positive(name, "R", v[2]);
        s->kind = SHAPE_DISC;
        memcpy(s->p, v, 3 * sizeof v[0]);
        s->bx0 = p[0] - p[2];
        s->bx1 = p[0] + p[2];
        s->by0 = p[1] - p[2];
        s->by1 = p[1] + p[2];
    } else if (!strcmp(name, "ring")) {
        need(name, n, 4, 4, "CX,CY,R,WIDTH");
        positive(name, "R", v[2]);
        positive(name, "WIDTH", v[3]);
        s->kind = SHAPE_RING;
        memcpy(s->p, v, 4 * sizeof v[0]);
        double r = p[2] + p[3] / 2;
        s->bx0 = p[0] - r;
        s->bx1 = p[0] + r;
        s->by0 = p[1] - r;
        s->by1 = p[1] + r;
    } else if (!strcmp(name, "ellipse")) {
        need(name, n, 4, 5, "CX,CY,RX,RY[,DEG]");
        positive(name, "RX", v[2]);
        positive(name, "RY", v[3]);
        double a = n == 5 ? v[4] * PI / 180.0 : 0.0;
        s->kind = SHAPE_ELLIPSE;
        memcpy(s->p, v, 4 * sizeof v[0]);
        s->p[4] = cos(a);
        s->p[5] = sin(a);
        double r = v[2] > v[3] ? v[2] : v[3];
        s->bx0 = p[0] - r;
        s->bx1 = p[0] + r;
        s->by0 = p[1] - r;
        s->by1 = p[1] + r;
    } else if (!strcmp(name, "rect") || !strcmp(name, "rect-outline")) {
        bool outline = name[4] == '-';
        if (outline)
            need(name, n, 5, 5, "X0,Y0,X1,Y1,WIDTH");
        else
            need(name, n, 4, 4, "X0,Y0,X1,Y1");
        s->kind = outline ? SHAPE_RECT_OUTLINE : SHAPE_RECT;
        s->p[0] = fmin(v[0], v[2]);
        s->p[1] = fmin(v[1], v[3]);
        s->p[2] = fmax(v[0], v[2]);
        s->p[3] = fmax(v[1], v[3]);
        if (!(p[2] > p[0] && p[3] > p[1]))
            fail("%s: empty rectangle", name);
        double h = 0.0;
        if (outline) {
            positive(name, "WIDTH", v[4]);
            s->p[4] = v[4];
            h = v[4] / 2;
        }
        s->bx0 = p[0] - h;
        s->by0 = p[1] - h;
        s->bx1 = p[2] + h;
        s->by1 = p[3] + h;
    } else if (!strcmp(name, "star")) {
        need(name, n, 5, 5, "CX,CY,ROUTER,RINNER,POINTS");
        positive(name, "ROUTER", v[2]);
        positive(name, "RINNER", v[3]);
        if (v[4] != floor(v[4]) || v[4] < 2 || v[4] > 1000)
            fail("star: POINTS must be a whole number in 2..1000, got %g", v[4]);
        int pts = (int)v[4];
        s->kind = SHAPE_POLYGON;
        s->npts = 2 * pts;
        s->pts = xmalloc(sizeof(double) * 2 * (size_t)s->npts);
        for (int k = 0; k < s->npts; k++) {
            double a = -PI / 2 + k * PI / pts, r = k % 2 ? v[3] : v[2];
            s->pts[2 * k] = v[0] + r * cos(a);
            s->pts[2 * k + 1] = v[1] + r * sin(a);
        }
        double r = v[2] > v[3] ? v[2] : v[3];
        s->bx0 = v[0] - r;
        s->bx1 = v[0] + r;
        s->by0 = v[1] - r;
        s->by1 = v[1] + r;
    } else if (!strcmp(name, "polygon")) {
        if (n < 6 || n % 2)
            fail("polygon: expected at least 3 X,Y pairs, got %d number%s", n,
                 n == 1 ? "" : "s");
        s->kind = SHAPE_POLYGON;
        s->npts = n / 2;
        s->pts = xmalloc(sizeof(double) * (size_t)n);
        memcpy(s->pts, v, sizeof(double) * (size_t)n);
        s->bx0 = s->bx1 = v[0];
        s->by0 = s->by1 = v[1];
        for (int k = 1; k < s->npts; k++) {
            s->bx0 = fmin(s->bx0, v[2 * k]);
            s->bx1 = fmax(s->bx1, v[2 * k]);
            s->by0 = fmin(s->by0, v[2 * k + 1]);
            s->by1 = fmax(s->by1, v[2 * k + 1]);
        }
    } else if (!strcmp(name, "line")) {
        need(name, n, 5, 5, "X0,Y0,X1,Y1,WIDTH");
        positive(name, "WIDTH", v[4]);
        s->kind = SHAPE_STROKES;
        s->npts = 1;
        s->pts = xmalloc(sizeof(double) * 4);
        memcpy(s->pts, v, 4 * sizeof v[0]);
        double h = v[4] / 2;
        s->p[0] = h;
        s->bx0 = fmin(v[0], v[2]) - h;
        s->bx1 = fmax(v[0], v[2]) + h;
        s->by0 = fmin(v[1], v[3]) - h;
        s->by1 = fmax(v[1], v[3]) + h;
    } else if (!strcmp(name, "heart")) {
        need(name, n, 3, 3, "CX,CY,R");
        positive(name, "R", v[2]);
        double hx, hy0, hy1;
        heart_box(&hx, &hy0, &hy1);
        double k = v[2] / hx;
        s->kind = SHAPE_HEART;
        s->p[2] = k;
        s->p[0] = v[0];
        /* box centre (y up: (hy0 + hy1) / 2) lands on cy */
        s->p[1] = v[1] + (hy0 + hy1) / 2 * k;
        s->bx0 = v[0] - v[2];
        s->bx1 = v[0] + v[2];
        s->by0 = v[1] - (hy1 - hy0) / 2 * k;
        s->by1 = v[1] + (hy1 - hy0) / 2 * k;
    } else {
        fail("unknown shape '%s' (see --help)", name);
    }
}

/* ------------------------------------------------------------------ blur */

/* Separable Gaussian, sigma in pixels, mirrored (zero-flux) borders, so the
 * total mass is kept. */
static void blur(Image *im, double sigma)
{
    int r = (int)ceil(3.0 * sigma);
    int w = im->w, h = im->h, n = w > h ? w : h;
    float *k = xmalloc(sizeof(float) * (size_t)(2 * r + 1));
    float *line = xmalloc(sizeof(float) * (size_t)n);
    double sum = 0.0;
    for (int i = -r; i <= r; i++)
        sum += k[i + r] = (float)exp(-0.5 * i * i / (sigma * sigma));
    for (int i = 0; i <= 2 * r; i++)
        k[i] = (float)(k[i] / sum);

    for (int pass = 0; pass < 2; pass++) {
        int len = pass ? h : w, count = pass ? w : h;
        size_t stride = pass ? (size_t)w : 1, step = pass ? 1 : (size_t)w;
        for (int c = 0; c < count; c++) {
            float *base = im->px + (size_t)c * step;
            for (int i = 0; i < len; i++)
                line[i] = base[(size_t)i * stride];
            for (int i = 0; i < len; i++) {
                double acc = 0.0;
                for (int j = -r; j <= r; j++) {
                    int q = i + j;
                    /* half-sample mirror, repeated for kernels wider than the image */
                    for (;;) {
                        if (q < 0)
                            q = -1 - q;
                        else if (q >= len)
                            q = 2 * len - 1 - q;
                        else
                            break;
                    }
                    acc += k[j + r] * line[q];
                }
                base[(size_t)i * stride] = (float)acc;
            }
        }
    }
    free(line);
    free(k);
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mktargets -o FILE [options] SHAPE...\n"
            "Draw a density image (white = smoke = 1 on black = 0) for smokemorph.\n"
            "Coordinates and sizes are in units of the image's shorter side:\n"
            "(0,0) is the top-left corner, y grows downwards, 1 spans a square image.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   PNG to write, 8-bit grey (required)\n"
            "  -s, --size WxH      image size in pixels, or N for NxN (default 256x256)\n"
            "  -b, --blur PX       soften with a Gaussian of sigma PX pixels (default 0: none)\n"
            "  -a, --aa N          N x N samples per pixel for anti-aliasing, 1..16 (default 4)\n"
            "      --add           add shapes (clamped to 1) instead of taking the maximum\n"
            "  -h, --help          show this help\n"
            "\n"
            "shapes, drawn in order:\n");
    for (int i = 0; shape_help[i]; i++)
        fprintf(f, "  %s\n", shape_help[i]);
    fprintf(f,
            "\n"
            "modifiers, appended to a shape:\n"
            "  :v=F   density multiplier in [0, 1] (default 1)\n"
            "  :sub   carve: what is drawn so far is multiplied by 1 - F x coverage\n"
            "  :w=F   text only: stroke width as a fraction of HEIGHT (default 0.16)\n"
            "\n"
            "text: A-Z (a-z drawn as capitals), 0-9, space and . , ! ? - + = : ' /\n"
            "example: mktargets -o moon.png --blur 2 disc:0.5,0.5,0.3 disc:0.62,0.4,0.26:sub\n");
}

static void parse_size(const char *s, int *w, int *h)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b = a;
    if (end != s && (*end == 'x' || *end == 'X')) {
        const char *q = end + 1;
        b = strtol(q, &end, 10);
        if (end == q)
            b = -1;
    }
    if (end == s || *end || errno || a > IMAGE_MAX_SIDE || b > IMAGE_MAX_SIDE ||
        !image_size_ok((int)a, (int)b) || a <= 0 || b <= 0)
        fail("--size: expected WxH or N with sides in 1..%d, got '%s'", IMAGE_MAX_SIDE, s);
    *w = (int)a;
    *h = (int)b;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"size", required_argument, NULL, 's'},
        {"blur", required_argument, NULL, 'b'},   {"aa", required_argument, NULL, 'a'},
        {"add", no_argument, NULL, 'A'},          {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int w = 256, h = 256, aa = 4;
    double sigma = 0.0;
    bool add = false;
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:s:b:a:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 's':
            parse_size(optarg, &w, &h);
            break;
        case 'b':
            sigma = parse_num("--blur", optarg, "PX");
            if (sigma < 0.0 || sigma > 1000.0)
                fail("--blur: expected 0..1000 pixels, got '%s'", optarg);
            break;
        case 'a': {
            double a = parse_num("--aa", optarg, "N");
            if (a != floor(a) || a < 1 || a > 16)
                fail("--aa: expected a whole number in 1..16, got '%s'", optarg);
            aa = (int)a;
            break;
        }
        case 'A':
            add = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
        default: {
            /* name the option as given: "--name" (without "=value") or "-c" */
            const char *a = argv[optind - 1];
            char opt[64] = {'-', (char)optopt, '\0'};
            if (!strncmp(a, "--", 2))
                snprintf(opt, sizeof opt, "%.*s", (int)strcspn(a, "="), a);
            if (c == ':')
                fail("option '%s' needs a value", opt);
            if (!strncmp(a, "--", 2) && strchr(a, '='))
                fail("option '%s' takes no value or is unknown (see --help)", opt);
            fail("unknown option '%s' (see --help)", opt);
        }
        }
    }
    if (!out || !*out)
        fail("-o FILE is required (see --help)");
    int nshapes = argc - optind;
    if (nshapes <= 0)
        fail("no shapes given (see --help)");

    /* parse everything first: a bad spec writes no file */
    Shape *shapes = xmalloc(sizeof(Shape) * (size_t)nshapes);
    for (int i = 0; i < nshapes; i++)
        parse_shape(argv[optind + i], &shapes[i]);

    Image *im = image_create(w, h, 1);
    if (!im)
        fail("cannot create a %dx%d image", w, h);
    for (int i = 0; i < nshapes; i++)
        shape_draw(&shapes[i], im, aa, add);
    if (sigma > 0.0)
        blur(im, sigma);

    char err[512] = "";
    int rc = image_save_png(out, im, 8, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", TAG, *err ? err : "cannot write the PNG");

    for (int i = 0; i < nshapes; i++)
        free(shapes[i].pts);
    free(shapes);
    image_free(im);
    return rc < 0 ? 1 : 0;
}
