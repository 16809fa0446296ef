/* echo.c - the raw floor for the native rows: echoes 4-byte big-endian
 * length-prefixed frames unchanged, over stdio or a Unix socket.
 *   echo stdio          one connection on stdin/stdout, exits at EOF
 *   echo stdio-lsp      the same with LSP framing (Content-Length headers)
 *   echo unix PATH      listens on PATH, one client at a time, until SIGTERM
 * Complete frames in a read are written back in one write; partial frames wait. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) { if (errno == EINTR) continue; return -1; }
    p += w; n -= (size_t)w;
  }
  return 0;
}

static int lsp = 0;

/* Length of the complete frame at p (n bytes available), 0 if incomplete, -1 if invalid. */
static long frame_len(const unsigned char *p, size_t n) {
  if (!lsp) {
    if (n < 4) return 0;
    uint32_t len = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    if (len > (64u << 20)) return -1; /* refuse absurd frames */
    return n - 4 < len ? 0 : 4 + (long)len;
  }
  /* LSP: header lines up to an empty line; Content-Length gives the body size. */
  long clen = -1;
  size_t i = 0;
  for (;;) {
    size_t e = i;
    while (e + 1 < n && !(p[e] == '\r' && p[e + 1] == '\n')) e++;
    if (e + 1 >= n) return e - i > 4096 ? -1 : 0;
    if (e == i) { i += 2; break; } /* empty line: end of the header */
    if (e - i > 15 && strncasecmp((const char *)p + i, "Content-Length:", 15) == 0) clen = atol((const char *)p + i + 15);
    i = e + 2;
  }
  if (clen < 0 || clen > (64l << 20)) return -1;
  return n - i < (size_t)clen ? 0 : (long)i + clen;
}

static void serve(int in, int out) {
  size_t cap = 1 << 20, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) return;
  for (;;) {
    if (len == cap) {
      unsigned char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb; cap *= 2;
    }
    ssize_t r = read(in, buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
    size_t off = 0;
    for (;;) {
      long f = frame_len(buf + off, len - off);
      if (f < 0) { free(buf); return; }
      if (f == 0) break;
      off += (size_t)f;
    }
    if (off) {
      if (write_all(out, buf, off) < 0) break;
      memmove(buf, buf + off, len - off);
      len -= off;
    }
  }
  free(buf);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 2 && strcmp(argv[1], "stdio") == 0) { serve(0, 1); return 0; }
  if (argc >= 2 && strcmp(argv[1], "stdio-lsp") == 0) { lsp = 1; serve(0, 1); return 0; }
  if (argc >= 3 && strcmp(argv[1], "unix") == 0) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
    unlink(argv[2]);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0) { perror("echo: listen"); return 1; }
    for (;;) {
      int c = accept(s, NULL, NULL);
      if (c < 0) { if (errno == EINTR) continue; perror("echo: accept"); return 1; }
      serve(c, c);
      close(c);
    }
  }
  fprintf(stderr, "usage: echo stdio | echo stdio-lsp | echo unix PATH\n");
  return 2;
}
