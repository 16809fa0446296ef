/* client.c - C client for the native rows: sends the same request frame
 * (4-byte big-endian length + JSON; only the id changes) over and over and counts answer frames,
 * so the figure is the server's and the transport's, not a client library's.
 *   client [OPT] small|large lat N      ADDR...   sequential round trips: prints p50 p99 (µs)
 *   client [OPT] small|large thr MS WIN ADDR...   WIN frames in flight for MS ms: prints calls/s
 * ADDR: unix PATH | exec PROG ARGS... (the server runs as a child on a pipe pair)
 * OPT: --lsp    LSP framing (Content-Length header) instead of the 4-byte length
 *      --check  the first answer to the small call must contain "result":3 (exit 5 if not)
 * Small call: add {"a":1,"b":2}; large call: echo ["x" * 65536]; ids 1000000000, 1000000001, ...
 * Output: one line of JSON. Every loop is bounded by N or MS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int rfd = -1, wfd = -1;
static pid_t child = 0;
static unsigned char *rbuf;
static size_t rcap = 1 << 22, rlen = 0;

static int lsp = 0, check = 0;

/* Size of the complete frame at p (n bytes available) and where its body starts; 0 if incomplete. */
static size_t frame_len(const unsigned char *p, size_t n, size_t *body) {
  if (!lsp) {
    if (n < 4) return 0;
    uint32_t len = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    *body = 4;
    return n - 4 < len ? 0 : 4 + (size_t)len;
  }
  long clen = -1;
  size_t i = 0;
  for (;;) {
    size_t e = i;
    while (e + 1 < n && !(p[e] == '\r' && p[e + 1] == '\n')) e++;
    if (e + 1 >= n) return 0;
    if (e == i) { i += 2; break; }
    if (e - i > 15 && strncasecmp((const char *)p + i, "Content-Length:", 15) == 0) clen = atol((const char *)p + i + 15);
    i = e + 2;
  }
  if (clen < 0) { fprintf(stderr, "client: LSP header without Content-Length\n"); exit(4); }
  *body = i;
  return n - i < (size_t)clen ? 0 : i + (size_t)clen;
}

static long answers = 0;

/* Writes the 10-digit id 1000000000 + k at p. */
static void put_id(unsigned char *p, long k) {
  long v = 1000000000L + k;
  for (int i = 9; i >= 0; i--) { p[i] = (unsigned char)('0' + v % 10); v /= 10; }
}

/* Complete frames at the start of rbuf are consumed; returns how many. */
static long take_frames(void) {
  size_t off = 0, f, body;
  long n = 0;
  while ((f = frame_len(rbuf + off, rlen - off, &body)) != 0) {
    if (check && answers++ == 0 && !memmem(rbuf + off + body, f - body, "\"result\":3", 10)) {
      fprintf(stderr, "client: the first answer is not \"result\":3: %.*s\n", (int)(f - body), rbuf + off + body);
      exit(5);
    }
    off += f;
    n++;
  }
  memmove(rbuf, rbuf + off, rlen - off);
  rlen -= off;
  return n;
}

static int read_some(void) {
  if (rlen == rcap) { rcap *= 2; rbuf = realloc(rbuf, rcap); if (!rbuf) return -1; }
  ssize_t r = read(rfd, rbuf + rlen, rcap - rlen);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (r <= 0) return -1;
  rlen += (size_t)r;
  return 1;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; argc--, argv++) {
    if (strcmp(argv[1], "--lsp") == 0) lsp = 1;
    else if (strcmp(argv[1], "--check") == 0) check = 1;
    else { fprintf(stderr, "client: unknown option %s\n", argv[1]); return 2; }
  }
  if (argc < 5) { fprintf(stderr, "usage: see client.c\n"); return 2; }
  int large = strcmp(argv[1], "large") == 0;
  int thr = strcmp(argv[2], "thr") == 0;
  long n = atol(argv[3]);
  long win = thr ? atol(argv[4]) : 1;
  int ai = thr ? 5 : 4;
  if (ai >= argc || n <= 0 || win <= 0) return 2;

  if (strcmp(argv[ai], "unix") == 0 && ai + 1 < argc) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, argv[ai + 1], sizeof a.sun_path - 1);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) { perror("client: connect"); return 3; }
    rfd = wfd = s;
  } else if (strcmp(argv[ai], "exec") == 0 && ai + 1 < argc) {
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return 3;
    child = fork();
    if (child == 0) {
      dup2(in[0], 0); dup2(out[1], 1);
      close(in[0]); close(in[1]); close(out[0]); close(out[1]);
      int dn = open("/dev/null", O_WRONLY);
      if (dn >= 0) dup2(dn, 2);
      execvp(argv[ai + 1], argv + ai + 1);
      _exit(127);
    }
    close(in[0]); close(out[1]);
    wfd = in[1]; rfd = out[0];
  } else return 2;

  /* The request: the same bytes every time (the floor echoes them; weft answers them). */
  size_t blen = large ? 65536 + 64 : 96;
  char *body = malloc(blen + 1);
  int bl;
  if (large) {
    char *s = malloc(65537);
    memset(s, 'x', 65536); s[65536] = 0;
    bl = snprintf(body, blen + 1, "{\"jsonrpc\":\"2.0\",\"id\":1000000000,\"method\":\"echo\",\"params\":[\"%s\"]}", s);
    free(s);
  } else {
    bl = snprintf(body, blen + 1, "{\"jsonrpc\":\"2.0\",\"id\":1000000000,\"method\":\"add\",\"params\":{\"a\":1,\"b\":2}}");
  }
  if (large) check = 0; /* the check is for the small call's answer */
  char head[64];
  int hl;
  if (lsp) hl = snprintf(head, sizeof head, "Content-Length: %d\r\n\r\n", bl);
  else { head[0] = bl >> 24; head[1] = bl >> 16; head[2] = bl >> 8; head[3] = bl; hl = 4; }
  size_t flen = (size_t)hl + (size_t)bl;
  unsigned char *frame = malloc(flen);
  memcpy(frame, head, hl);
  memcpy(frame + hl, body, bl);
  /* Every request gets its own id (peers such as vscode-jsonrpc drop a request whose id is
   * already in flight): 10 digits patched in place, so every frame has the same size. */
  const size_t id_off = (size_t)hl + strlen("{\"jsonrpc\":\"2.0\",\"id\":");
  rbuf = malloc(rcap);

  fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
  if (wfd != rfd) fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) | O_NONBLOCK);

  /* A batch of up to `win` frames is written back to back; answers are counted. */
  size_t wcap = flen * (size_t)win;
  unsigned char *wbuf = malloc(wcap);
  size_t wlen = 0, woff = 0;
  long sent = 0, got = 0, inflight = 0;
  double deadline = 0, t_start = 0;
  double *lat = thr ? NULL : malloc(sizeof(double) * (size_t)n);
  double t_call = 0;
  long warm = thr ? 0 : (n / 8 > 50 ? n / 8 : 50), total_lat = thr ? 0 : warm + n;
  if (thr) {
    /* warm-up 200 ms, then the measured window */
    t_start = now_us();
    deadline = t_start + 200e3;
  }
  int phase = 0; /* thr: 0 warm-up, 1 measured, 2 draining */
  long measured = 0;
  double t_meas = 0;
  for (;;) {
    /* refill the write buffer */
    if (woff == wlen) {
      wlen = woff = 0;
      if (thr) {
        if (phase < 2) {
          while (inflight < win) { memcpy(wbuf + wlen, frame, flen); put_id(wbuf + wlen + id_off, sent); wlen += flen; inflight++; sent++; }
        }
      } else if (inflight == 0 && sent < total_lat) {
        memcpy(wbuf, frame, flen); put_id(wbuf + id_off, sent); wlen = flen; inflight = 1; sent++;
        t_call = now_us();
      }
    }
    if (thr && phase == 2 && inflight == 0) break;
    if (!thr && got >= total_lat) break;
    struct pollfd p[2];
    int np = 0;
    p[np].fd = rfd; p[np].events = POLLIN; np++;
    if (woff < wlen) {
      if (wfd == rfd) p[0].events |= POLLOUT;
      else { p[np].fd = wfd; p[np].events = POLLOUT; np++; }
    }
    if (poll(p, np, 10000) <= 0) { fprintf(stderr, "client: timeout/poll error\n"); return 4; }
    if (woff < wlen) {
      ssize_t w = write(wfd, wbuf + woff, wlen - woff);
      if (w > 0) woff += (size_t)w;
      else if (w < 0 && errno != EAGAIN && errno != EINTR) { perror("client: write"); return 4; }
    }
    int r = read_some();
    if (r < 0) { fprintf(stderr, "client: server closed\n"); return 4; }
    if (r > 0) {
      long k = take_frames();
      if (k) {
        double t = now_us();
        inflight -= k;
        got += k;
        if (!thr) {
          if (got > warm) lat[got - warm - 1] = t - t_call;
        } else {
          if (phase == 1) measured += k;
          if (phase == 0 && t >= deadline) { phase = 1; t_meas = t; deadline = t + n * 1e3; }
          else if (phase == 1 && t >= deadline) { phase = 2; }
        }
      }
    }
  }
  if (thr) {
    double secs = (now_us() - t_meas) / 1e6;
    printf("{\"rate\":%.1f,\"calls\":%ld,\"seconds\":%.3f}\n", measured / secs, measured, secs);
  } else {
    qsort(lat, (size_t)n, sizeof(double), cmp);
    long i50 = (long)(0.50 * n + 0.999999) - 1, i99 = (long)(0.99 * n + 0.999999) - 1;
    printf("{\"p50\":%.2f,\"p99\":%.2f,\"n\":%ld}\n", lat[i50 < 0 ? 0 : i50], lat[i99 < 0 ? 0 : i99], n);
  }
  if (child) { close(wfd); waitpid(child, NULL, 0); }
  return 0;
}
