// heap_sites: live heap by allocation stack for what libcef allocates in the
// app's own process (issue 16). See soak/heap-sites/README.md.
//
// Why by hand: libcef's allocator shim calls glibc's __libc_malloc and friends
// directly, past the malloc/free that heaptrack (and every LD_PRELOAD heap
// profiler) interposes, and libcef ships almost no unwind tables (.eh_frame is
// 92 KiB for 170 MiB of code) but keeps frame pointers. So this preload
// defines those __libc_* entry points (libcef imports them, the preload's
// definition wins), forwards to glibc's malloc, and walks the frame-pointer
// chain of each allocation. Every HEAP_SITES_EVERY seconds it writes the live
// bytes and blocks of every stack to HEAP_SITES_DIR/sites-<pid>-<secs>.txt;
// report.py diffs two dumps and names libcef's frames by the strings their
// functions use. Only the process whose argv has no --type= (the browser
// process: the app) records; Chromium's helpers pass straight through.
//
// Build: cc -O2 -fno-omit-frame-pointer -shared -fPIC -o heap_sites.so heap_sites.c -lpthread
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 24
#define SITE_BITS 19
#define PTR_BITS 23
#define NSITES (1u << SITE_BITS)
#define NPTRS (1u << PTR_BITS)

struct site {
  uint64_t hash;
  uint64_t live_bytes;
  uint64_t live_blocks;
  uint64_t allocs;
  uint32_t depth;
  uintptr_t frames[DEPTH];
};

struct ptr_entry {
  uintptr_t ptr; // 0: empty
  uint64_t size;
  uint32_t site;
};

static struct site *sites;
static struct ptr_entry *ptrs;
static uint64_t nsites_used, lost_sites, lost_ptrs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state; // 0 unknown, 1 recording, 2 pass-through
static pid_t owner;
static long every_secs = 60;
static long next_dump;
static long started;
static char dir[512] = "/tmp";

static __thread int busy __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

static long now_secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec;
}

// Reads a whole small file with raw syscalls (no malloc).
static ssize_t slurp(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r <= 0) break;
    n += (size_t)r;
    if (n == cap) break;
  }
  close(fd);
  return (ssize_t)n;
}

static void decide(void) {
  char cmd[8192];
  ssize_t n = slurp("/proc/self/cmdline", cmd, sizeof cmd);
  int helper = 0;
  for (ssize_t i = 0; i + 7 <= n; i++)
    if ((i == 0 || cmd[i - 1] == 0) && memcmp(cmd + i, "--type=", 7) == 0) helper = 1;
  if (helper || n <= 0) {
    state = 2;
    return;
  }
  const char *d = getenv("HEAP_SITES_DIR");
  if (d && strlen(d) < sizeof dir) strcpy(dir, d);
  const char *e = getenv("HEAP_SITES_EVERY");
  if (e && atol(e) > 0) every_secs = atol(e);
  sites = mmap(0, sizeof(struct site) * NSITES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ptrs = mmap(0, sizeof(struct ptr_entry) * NPTRS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (sites == MAP_FAILED || ptrs == MAP_FAILED) {
    state = 2;
    return;
  }
  owner = getpid();
  started = now_secs();
  next_dump = started + every_secs;
  state = 1;
}

static int recording(void) {
  if (__builtin_expect(state == 0, 0)) {
    pthread_mutex_lock(&lock);
    if (state == 0) decide();
    pthread_mutex_unlock(&lock);
  }
  return state == 1 && getpid() == owner;
}

static void stack_bounds(void) {
  if (stack_hi) return;
  pthread_attr_t attr;
  void *addr;
  size_t size;
  busy = 1; // pthread_getattr_np reads /proc/self/maps with stdio on the main thread
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      stack_lo = (uintptr_t)addr;
      stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
  }
  busy = 0;
  if (!stack_hi) stack_hi = 1; // unknown: record without a stack
}

static uint32_t unwind(uintptr_t *out) {
  uint32_t n = 0;
  uintptr_t *fp = __builtin_frame_address(0);
  while (n < DEPTH) {
    uintptr_t f = (uintptr_t)fp;
    if (f < stack_lo || f + 16 > stack_hi || (f & 7)) break;
    uintptr_t ret = fp[1];
    if (ret < 4096) break;
    out[n++] = ret;
    uintptr_t *next = (uintptr_t *)fp[0];
    if ((uintptr_t)next <= f) break;
    fp = next;
  }
  return n;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// Under the lock.
static uint32_t site_of(const uintptr_t *frames, uint32_t depth) {
  uint64_t h = depth;
  for (uint32_t i = 0; i < depth; i++) h = mix(h, frames[i]);
  if (!h) h = 1;
  for (uint32_t i = 0, s = (uint32_t)h & (NSITES - 1); i < 64; i++, s = (s + 1) & (NSITES - 1)) {
    struct site *st = &sites[s];
    if (st->hash == h && st->depth == depth && memcmp(st->frames, frames, depth * sizeof *frames) == 0) return s;
    if (!st->hash) {
      st->hash = h;
      st->depth = depth;
      memcpy(st->frames, frames, depth * sizeof *frames);
      nsites_used++;
      return s;
    }
  }
  lost_sites++;
  return 0; // slot 0 collects what did not fit
}

static uint32_t ptr_slot(uintptr_t p) { return (uint32_t)((p >> 4) * 0x9e3779b97f4a7c15ull >> (64 - PTR_BITS)); }

static void ptr_put(uintptr_t p, uint64_t size, uint32_t site) {
  for (uint32_t i = 0, s = ptr_slot(p); i < NPTRS; i++, s = (s + 1) & (NPTRS - 1)) {
    if (!ptrs[s].ptr) {
      ptrs[s] = (struct ptr_entry){p, size, site};
      sites[site].live_bytes += size;
      sites[site].live_blocks++;
      sites[site].allocs++;
      return;
    }
  }
  lost_ptrs++;
}

// Linear probing with backward-shift deletion, so lookups never see tombstones.
static void ptr_del(uintptr_t p) {
  uint32_t s = ptr_slot(p);
  for (uint32_t i = 0; i < NPTRS; i++, s = (s + 1) & (NPTRS - 1)) {
    if (!ptrs[s].ptr) return; // not ours (allocated before recording, or by glibc's malloc)
    if (ptrs[s].ptr == p) break;
  }
  struct site *st = &sites[ptrs[s].site];
  st->live_bytes -= ptrs[s].size;
  st->live_blocks--;
  uint32_t hole = s;
  for (uint32_t j = (s + 1) & (NPTRS - 1); ptrs[j].ptr; j = (j + 1) & (NPTRS - 1)) {
    uint32_t home = ptr_slot(ptrs[j].ptr);
    // Moves j into the hole when its home is not in (hole, j].
    if (((j - home) & (NPTRS - 1)) >= ((j - hole) & (NPTRS - 1))) {
      ptrs[hole] = ptrs[j];
      hole = j;
    }
  }
  ptrs[hole].ptr = 0;
}

// A tiny writer: no stdio, no malloc.
struct out {
  int fd;
  size_t n;
  char buf[1 << 16];
};
static struct out dump_out;

static void out_flush(struct out *o) {
  size_t w = 0;
  while (w < o->n) {
    ssize_t r = write(o->fd, o->buf + w, o->n - w);
    if (r <= 0) break;
    w += (size_t)r;
  }
  o->n = 0;
}
static void out_str(struct out *o, const char *s) {
  while (*s) {
    if (o->n == sizeof o->buf) out_flush(o);
    o->buf[o->n++] = *s++;
  }
}
// Writes v in base 10 or 16 at dst, NUL-terminated; its length.
static size_t fmt_u(char *dst, uint64_t v, int base) {
  char t[24];
  size_t i = 0, k = 0;
  do {
    t[i++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  while (i) dst[k++] = t[--i];
  dst[k] = 0;
  return k;
}
static void out_u(struct out *o, uint64_t v, int base) {
  char r[25];
  fmt_u(r, v, base);
  out_str(o, r);
}

// Under the lock.
static void dump(long t) {
  char path[600];
  struct out *o = &dump_out;
  o->n = 0;
  // path: DIR/sites-PID-SECS.txt
  {
    size_t k = strlen(dir);
    memcpy(path, dir, k);
    memcpy(path + k, "/sites-", 7);
    k += 7;
    k += fmt_u(path + k, (uint64_t)owner, 10);
    path[k++] = '-';
    k += fmt_u(path + k, (uint64_t)(t - started), 10);
    memcpy(path + k, ".txt", 5);
  }
  o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (o->fd < 0) return;
  uint64_t live = 0, blocks = 0;
  for (uint32_t s = 0; s < NSITES; s++) {
    live += sites[s].live_bytes;
    blocks += sites[s].live_blocks;
  }
  out_str(o, "# secs ");
  out_u(o, (uint64_t)(t - started), 10);
  out_str(o, " live_bytes ");
  out_u(o, live, 10);
  out_str(o, " live_blocks ");
  out_u(o, blocks, 10);
  out_str(o, " sites ");
  out_u(o, nsites_used, 10);
  out_str(o, " lost_sites ");
  out_u(o, lost_sites, 10);
  out_str(o, " lost_ptrs ");
  out_u(o, lost_ptrs, 10);
  out_str(o, "\n# live_bytes live_blocks allocs frames...\n");
  for (uint32_t s = 0; s < NSITES; s++) {
    struct site *st = &sites[s];
    if (!st->allocs) continue;
    out_u(o, st->live_bytes, 10);
    out_str(o, " ");
    out_u(o, st->live_blocks, 10);
    out_str(o, " ");
    out_u(o, st->allocs, 10);
    for (uint32_t i = 0; i < st->depth; i++) {
      out_str(o, " ");
      out_u(o, st->frames[i], 16);
    }
    out_str(o, "\n");
  }
  // The mappings, to turn addresses into module offsets afterwards.
  out_str(o, "# maps\n");
  out_flush(o);
  int mfd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (mfd >= 0) {
    for (;;) {
      ssize_t r = read(mfd, o->buf, sizeof o->buf);
      if (r <= 0) break;
      o->n = (size_t)r;
      out_flush(o);
    }
    close(mfd);
  }
  close(o->fd);
}

static void record(void *p, size_t size) {
  if (!p) return;
  uintptr_t frames[DEPTH];
  stack_bounds();
  uint32_t depth = busy ? 0 : unwind(frames);
  pthread_mutex_lock(&lock);
  ptr_put((uintptr_t)p, size, site_of(frames, depth));
  long t = now_secs();
  if (t >= next_dump) {
    next_dump = t + every_secs;
    dump(t);
  }
  pthread_mutex_unlock(&lock);
}

static void forget(void *p) {
  if (!p) return;
  pthread_mutex_lock(&lock);
  ptr_del((uintptr_t)p);
  pthread_mutex_unlock(&lock);
}

void *__libc_malloc(size_t n) {
  void *p = malloc(n);
  if (!busy && recording()) record(p, n);
  return p;
}

void *__libc_calloc(size_t a, size_t b) {
  void *p = calloc(a, b);
  if (!busy && recording()) record(p, a * b);
  return p;
}

void *__libc_memalign(size_t align, size_t n) {
  void *p = memalign(align, n);
  if (!busy && recording()) record(p, n);
  return p;
}

void *__libc_realloc(void *old, size_t n) {
  int rec = recording();
  if (rec && old) forget(old);
  void *p = realloc(old, n);
  if (rec && !busy && p) record(p, n);
  else if (rec && !p && old && n) record(old, malloc_usable_size(old)); // failed: old stays
  return p;
}

void __libc_free(void *p) {
  if (p && recording()) forget(p);
  free(p);
}
