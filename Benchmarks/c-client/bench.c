/* Curlew benchmarks — the C limit: libcurl's multi interface with curl_multi_socket_action + epoll on one
 * thread, reusing easy handles and connections, with libcurl's default buffer sizes.
 *
 * usage: bench-c WORKLOAD BASE_URL [SCALE]   (same workloads and JSON output as the Swift clients) */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

typedef struct {
    const char *name, *path, *method; long concurrency, requests, expected; int post; long connections; int tls, fresh, noresume, h2, stream; long long upload; int upload_unknown;
    /* Files (issue 15): the body written to a file (2: fsync before the rename, and the directory after);
       the upload read from the file BENCH_UPLOAD_FILE (`upfile`) or BENCH_JSON_FILE gzipped on the fly at
       level 1 (`gzip`, chunked). */
    int tofile, upfile, gzip;
} workload;

typedef struct {
    CURL *easy;
    long bytes;
    /* Upload workloads: bytes handed to libcurl so far. */
    long long sent;
    double started;
    /* The body is kept in memory, as every Swift client does: a buffer that grows by doubling. */
    char *body;
    size_t capacity;
    /* File workloads: the temporary file being written (opened at the first body bytes, as Curlew
       opens its own when the head arrives), the upload file being read, the gzip stream. */
    int fd, upload_fd;
    z_stream z;
    int z_done, z_eof;
    unsigned char *z_in;
} slot;

static int epfd;
static long timeout_ms = -1;
static CURLM *multi;
static unsigned char *registered, *wanted;
static char post_body[4096];

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static long long upload_total;
static char upload_chunk[64 * 1024];

/* Streamed download: the bytes are counted and dropped, as a streaming consumer does. */
static size_t on_write_discard(char *p, size_t s, size_t n, void *u) {
    (void)p;
    ((slot *)u)->bytes += (long)(s * n);
    return s * n;
}

/* Streamed upload: libcurl's buffer filled from a static chunk, as fast as libcurl asks. */
static size_t on_read(char *buffer, size_t s, size_t n, void *u) {
    slot *t = u;
    size_t want = s * n;
    long long left = upload_total - t->sent;
    if (left <= 0) return 0;
    if ((long long)want > left) want = (size_t)left;
    if (want > sizeof upload_chunk) want = sizeof upload_chunk;
    memcpy(buffer, upload_chunk, want);
    t->sent += (long long)want;
    return want;
}

/* Downloads to a file: the temporary file beside the destination, written with write(2) in the write
   callback (libcurl's default 16 KiB pieces); renamed into place when complete. */
static const char *file_dir = ".";
static char temp_path[4096], dest_path[4096];
static int sync_file;

static size_t on_write_file(char *p, size_t s, size_t n, void *u) {
    slot *t = u;
    size_t len = s * n, done = 0;
    if (t->fd < 0) {
        t->fd = open(temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (t->fd < 0) { perror(temp_path); return 0; }
    }
    while (done < len) {
        ssize_t w = write(t->fd, p + done, len - done);
        if (w < 0) { if (errno == EINTR) continue; perror("write"); return 0; }
        done += (size_t)w;
    }
    t->bytes += (long)len;
    return len;
}

/* Completes a download: (fsync,) close, rename into place (, fsync the directory); checks the size and
   deletes the file, so every request writes a new one. Returns 0 when all went well. */
static int finish_file(slot *t, long expected) {
    int failed = 0;
    if (t->fd < 0) return 1;
    if (sync_file && fsync(t->fd) != 0) failed = 1;
    if (close(t->fd) != 0) failed = 1;
    t->fd = -1;
    if (rename(temp_path, dest_path) != 0) { perror("rename"); unlink(temp_path); return 1; }
    if (sync_file) {
        int dir = open(file_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0 || fsync(dir) != 0) failed = 1;
        if (dir >= 0) close(dir);
    }
    struct stat info;
    if (stat(dest_path, &info) != 0 || info.st_size != expected) failed = 1;
    unlink(dest_path);
    return failed;
}

/* Uploads from a file: read(2) straight into libcurl's upload buffer. */
static size_t on_read_file(char *buffer, size_t s, size_t n, void *u) {
    slot *t = u;
    for (;;) {
        ssize_t r = read(t->upload_fd, buffer, s * n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return CURL_READFUNC_ABORT;
        t->sent += r;
        return (size_t)r;
    }
}

/* Compressed uploads: the file read 64 KiB at a time and deflated (gzip wrapper, level 1) into
   libcurl's upload buffer until it is full; the length is unknown, so HTTP/1.1 sends it chunked. */
static size_t on_read_gzip(char *buffer, size_t s, size_t n, void *u) {
    slot *t = u;
    if (t->z_done) return 0;
    t->z.next_out = (unsigned char *)buffer;
    t->z.avail_out = (uInt)(s * n);
    while (t->z.avail_out > 0) {
        if (t->z.avail_in == 0 && !t->z_eof) {
            ssize_t r = read(t->upload_fd, t->z_in, 64 * 1024);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return CURL_READFUNC_ABORT;
            if (r == 0) t->z_eof = 1;
            else { t->z.next_in = t->z_in; t->z.avail_in = (uInt)r; t->sent += r; }
        }
        int rc = deflate(&t->z, t->z_eof ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_END) { t->z_done = 1; break; }
        if (rc != Z_OK && rc != Z_BUF_ERROR) return CURL_READFUNC_ABORT;
    }
    return s * n - t->z.avail_out;
}

/* Opens the upload file (and the gzip stream) for a new request. */
static int start_upload_file(slot *t, const workload *w, const char *file) {
    if (t->upload_fd >= 0) close(t->upload_fd);
    t->upload_fd = open(file, O_RDONLY | O_CLOEXEC);
    if (t->upload_fd < 0) { perror(file); return -1; }
    if (w->gzip) {
        if (t->z_in) deflateEnd(&t->z); else t->z_in = malloc(64 * 1024);
        memset(&t->z, 0, sizeof t->z);
        if (deflateInit2(&t->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
        t->z_done = 0; t->z_eof = 0;
    }
    return 0;
}

static size_t on_write(char *p, size_t s, size_t n, void *u) {
    slot *t = u;
    size_t len = s * n, need = (size_t)t->bytes + len;
    if (need > t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 16384;
        while (cap < need) cap *= 2;
        char *grown = realloc(t->body, cap);
        if (!grown) return 0;
        t->body = grown;
        t->capacity = cap;
    }
    memcpy(t->body + t->bytes, p, len);
    t->bytes += (long)len;
    return len;
}

static void ctl(int op, int fd, unsigned ev) { struct epoll_event e = {.events = ev, .data.fd = fd}; epoll_ctl(epfd, op, fd, &e); }

static int on_socket(CURL *e, curl_socket_t s, int what, void *u, void *sp) {
    (void)e; (void)u; (void)sp;
    unsigned ev = what == CURL_POLL_IN ? EPOLLIN : what == CURL_POLL_OUT ? EPOLLOUT : what == CURL_POLL_INOUT ? (EPOLLIN | EPOLLOUT) : 0;
    wanted[s] = (unsigned char)ev;
    if (ev == 0 || registered[s] == ev) return 0;
    ctl(registered[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, ev);
    registered[s] = (unsigned char)ev;
    return 0;
}

static int on_close(void *u, curl_socket_t s) { (void)u; if (registered[s]) ctl(EPOLL_CTL_DEL, s, 0); registered[s] = wanted[s] = 0; return close(s); }
static int on_timer(CURLM *m, long ms, void *u) { (void)m; (void)u; timeout_ms = ms; return 0; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s WORKLOAD BASE_URL [SCALE]\n", argv[0]); return 2; }
    double scale = argc > 3 ? atof(argv[3]) : 1;
    long users = getenv("BENCH_USERS_LENGTH") ? atol(getenv("BENCH_USERS_LENGTH")) : 0;
    long c10k = (long)(10000 * (scale * 10 < 1 ? scale * 10 : 1)); if (c10k < 2) c10k = 2;
#define N(x) ((long)((x) * scale) > 0 ? (long)((x) * scale) : 1)
#define FOUR ((long)(4 * scale) > 0 ? (long)(4 * scale) : 1)
    workload all[] = {
        {"small-get-1", "/small", "GET", 1, N(20000), 106, 0},
        {"small-get-64", "/small", "GET", 64, N(100000), 106, 0},
        {"json-16", "/users.json", "GET", 16, N(40000), users, 0},
        {"post-4k", "/post", "POST", 16, N(40000), 3, 1},
        {"download-256m", "/big", "GET", 1, (long)(4 * scale) > 0 ? (long)(4 * scale) : 1, 256L * 1024 * 1024, 0},
        {"concurrent-10k", "/slow", "GET", c10k, c10k, 12, 0},
        /* 10,000 at once over 64 connections: libcurl's own pending queue holds the rest. */
        {"queued-10k", "/fast", "GET", c10k, c10k, 12, 0, 64},
        /* HTTPS/1.1 against the same CA file as every client; `fresh`: a new connection per request. */
        {"https-get-1", "/small", "GET", 1, N(20000), 106, 0, 0, 1},
        {"https-get-64", "/small", "GET", 64, N(100000), 106, 0, 0, 1},
        {"tls-new-conn", "/small", "GET", 1, N(4000), 106, 0, 0, 1, 1},
        {"tls-new-conn-noresume", "/small", "GET", 1, N(4000), 106, 0, 0, 1, 1, 1},
        /* HTTP/2 over TLS: ALPN h2, PIPEWAIT so a burst waits for the connection and multiplexes. */
        {"h2-get-64", "/small", "GET", 64, N(100000), 106, 0, 0, 1, 0, 0, 1},
        {"h2-500", "/small", "GET", 500, N(50000), 106, 0, 0, 1, 0, 0, 1},
        /* Streamed bodies: a download counted and dropped; uploads through CURLOPT_READFUNCTION. */
        {"stream-download-256m", "/big", "GET", 1, (long)(4 * scale) > 0 ? (long)(4 * scale) : 1, 256L * 1024 * 1024, 0, 0, 0, 0, 0, 0, 1},
        {"stream-upload-256m", "/upload", "POST", 1, (long)(4 * scale) > 0 ? (long)(4 * scale) : 1, 2, 0, 0, 0, 0, 0, 0, 0, 256LL * 1024 * 1024},
        {"h2-upload-slow-known", "/slow-read?rate=1048576", "POST", 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0},
        {"h2-upload-slow-unknown", "/slow-read?rate=1048576", "POST", 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1},
        /* Files (issue 15): the 256 MiB body written to a file and renamed into place (fsync: the file
           before the rename, the directory after); a 256 MiB file uploaded through READFUNCTION; a 64 MiB
           JSON file gzipped at level 1 while it is sent (the upload length is the file's, set below). */
        {.name = "download-file-256m", .path = "/big", .method = "GET", .concurrency = 1, .requests = FOUR, .expected = 256L * 1024 * 1024, .tofile = 1},
        {.name = "download-file-256m-fsync", .path = "/big", .method = "GET", .concurrency = 1, .requests = FOUR, .expected = 256L * 1024 * 1024, .tofile = 2},
        /* Issue 16: what the provider's `.downloadDestination` download is held to (download-file-256m's work). */
        {.name = "download-destination-256m", .path = "/big", .method = "GET", .concurrency = 1, .requests = FOUR, .expected = 256L * 1024 * 1024, .tofile = 1},
        {.name = "upload-file-256m", .path = "/upload", .method = "POST", .concurrency = 1, .requests = FOUR, .expected = 2, .upfile = 1},
        {.name = "gzip-json-64m", .path = "/upload", .method = "POST", .concurrency = 1, .requests = FOUR, .expected = 2, .upload_unknown = 1, .gzip = 1},
    };
    workload *w = NULL;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) if (!strcmp(all[i].name, argv[1])) w = &all[i];
    if (!w) { fprintf(stderr, "unknown workload %s\n", argv[1]); return 2; }
    if (!strncmp(w->name, "h2-upload-slow", 14)) {
        /* 20 MiB for the full run, 1 MiB for smoke runs (the Swift clients' figure). */
        long long mib = (long long)(20 * (scale * 5 < 1 ? scale * 5 : 1));
        if (mib < 1) mib = 1;
        w->upload = mib << 20;
        char reply[64];
        w->expected = snprintf(reply, sizeof reply, "{\"received\": %lld}", w->upload);
    }
    /* File workloads: where downloads go, and the file an upload reads (its length is the upload's). */
    const char *upload_file = NULL;
    if (getenv("BENCH_FILE_DIR")) file_dir = getenv("BENCH_FILE_DIR");
    if (w->tofile) {
        sync_file = w->tofile == 2;
        snprintf(dest_path, sizeof dest_path, "%s/download-c-%d", file_dir, (int)getpid());
        snprintf(temp_path, sizeof temp_path, "%s/.download-c-%d.%08lx.download", file_dir, (int)getpid(), (unsigned long)random());
    }
    if (w->upfile || w->gzip) {
        upload_file = getenv(w->gzip ? "BENCH_JSON_FILE" : "BENCH_UPLOAD_FILE");
        struct stat info;
        if (!upload_file || stat(upload_file, &info) != 0) { fprintf(stderr, "no upload file (BENCH_UPLOAD_FILE / BENCH_JSON_FILE)\n"); return 2; }
        w->upload = info.st_size;
    }
    upload_total = w->upload;
    memset(upload_chunk, 'a', sizeof upload_chunk);
    char url[512]; snprintf(url, sizeof url, "%s%s", argv[2], w->path);
    const char *pattern = "{\"k\":\"0123456789abcdef\"},";
    for (size_t i = 0; i < sizeof post_body; i++) post_body[i] = pattern[i % strlen(pattern)];

    struct rlimit r; getrlimit(RLIMIT_NOFILE, &r); r.rlim_cur = r.rlim_max; setrlimit(RLIMIT_NOFILE, &r);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, w->concurrency + 16);
    if (w->connections) curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, w->connections);
    if (w->h2) curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 256L);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    registered = calloc(1 << 20, 1); wanted = calloc(1 << 20, 1);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct curl_slist *headers = w->post ? curl_slist_append(curl_slist_append(NULL, "Content-Type: application/json"), "Expect:")
        : w->gzip ? curl_slist_append(curl_slist_append(curl_slist_append(NULL, "Content-Type: application/json"), "Content-Encoding: gzip"), "Expect:")
        : w->upload ? curl_slist_append(curl_slist_append(NULL, "Content-Type: application/octet-stream"), "Expect:") : NULL;
    /* A new connection per request: the server closes after answering. */
    if (w->fresh) headers = curl_slist_append(headers, "Connection: close");
    /* Trust: the CA file alone (libcurl's CA store cache works), or with BENCH_C_TRUST=debian the way
       Debian's libcurl is set up by default (CAINFO and CAPATH both set, no cache). */
    const char *ca = getenv("BENCH_CA_FILE");
    int debian_trust = getenv("BENCH_C_TRUST") && !strcmp(getenv("BENCH_C_TRUST"), "debian");
    CURLSH *share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);

    long idle_rss = 0; FILE *idle = fopen("/proc/self/status", "r"); char idle_line[256];
    while (idle && fgets(idle_line, sizeof idle_line, idle)) if (!strncmp(idle_line, "VmRSS:", 6)) idle_rss = atol(idle_line + 6);
    if (idle) fclose(idle);
    double *latencies = calloc((size_t)w->requests, sizeof(double));
    slot *slots = calloc((size_t)w->concurrency, sizeof(slot));
    long started = 0, completed = 0, errors = 0;
    struct rusage u0; getrusage(RUSAGE_SELF, &u0);
    double t0 = now();
    for (long i = 0; i < w->concurrency && started < w->requests; i++) {
        CURL *e = curl_easy_init();
        slots[i].easy = e;
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, w->tofile ? on_write_file : w->stream ? on_write_discard : on_write);
        slots[i].fd = slots[i].upload_fd = -1;
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &slots[i]);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &slots[i]);
        curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, 120L);
        if (w->tls) {
            curl_easy_setopt(e, CURLOPT_CAINFO, ca);
            if (!debian_trust) curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
            curl_easy_setopt(e, CURLOPT_SHARE, share);
            if (w->noresume) curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L);
            curl_easy_setopt(e, CURLOPT_HTTP_VERSION, w->h2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
            if (w->h2) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        }
        if (headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
        if (w->post) { curl_easy_setopt(e, CURLOPT_POSTFIELDS, post_body); curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)sizeof post_body); }
        if (w->upload) {
            curl_easy_setopt(e, CURLOPT_POST, 1L);
            curl_easy_setopt(e, CURLOPT_READFUNCTION, w->gzip ? on_read_gzip : w->upfile ? on_read_file : on_read);
            curl_easy_setopt(e, CURLOPT_READDATA, &slots[i]);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, w->upload_unknown ? (curl_off_t)-1 : (curl_off_t)w->upload);
        }
        slots[i].started = now();
        if (upload_file && start_upload_file(&slots[i], w, upload_file) != 0) return 1;
        curl_multi_add_handle(multi, e);
        started++;
    }
    struct epoll_event events[1024];
    int running;
    while (completed < w->requests) {
        int n = epoll_wait(epfd, events, 1024, (int)timeout_ms);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (!wanted[fd]) { if (registered[fd]) { ctl(EPOLL_CTL_DEL, fd, 0); registered[fd] = 0; } continue; }
            int flags = (events[i].events & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) | (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) | (events[i].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(multi, fd, flags, &running);
        }
        if (n <= 0 || timeout_ms == 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        int q; CURLMsg *m;
        while ((m = curl_multi_info_read(multi, &q))) {
            if (m->msg != CURLMSG_DONE) continue;
            slot *s; long code = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (m->data.result != CURLE_OK || code != 200 || s->bytes != w->expected) errors++;
            if (w->tofile && finish_file(s, w->expected) != 0) errors++;
            if (upload_file && s->sent != w->upload) errors++;
            latencies[completed++] = now() - s->started;
            CURL *e = m->easy_handle;
            curl_multi_remove_handle(multi, e);
            free(s->body); s->body = NULL; s->capacity = 0; s->bytes = 0; s->sent = 0; /* handed to the caller */
            if (started < w->requests) {
                s->started = now();
                if (upload_file && start_upload_file(s, w, upload_file) != 0) return 1;
                curl_multi_add_handle(multi, e);
                started++;
            }
        }
    }
    double seconds = now() - t0;
    struct rusage u1; getrusage(RUSAGE_SELF, &u1);
    double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) + ((u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec)) / 1e6;
    qsort(latencies, (size_t)completed, sizeof(double), cmp);
    long rss = 0; FILE *f = fopen("/proc/self/status", "r"); char line[256];
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "VmHWM:", 6)) rss = atol(line + 6);
    if (f) fclose(f);
    printf("{\"client\":\"c-libcurl\",\"cpu_us_per_request\":%.3f,\"cpu_percent\":%.3f,\"csw\":%ld,\"idle_rss_kib\":%ld,\"errors\":%ld,\"first_error\":\"\",\"mibps\":%.3f,\"p50_us\":%.0f,\"p99_us\":%.0f,\"peak_rss_kib\":%ld,\"requests\":%ld,\"rps\":%.3f,\"seconds\":%.6f,\"workload\":\"%s\"}\n",
           cpu * 1e6 / completed, cpu / seconds * 100, (u1.ru_nvcsw - u0.ru_nvcsw) + (u1.ru_nivcsw - u0.ru_nivcsw), idle_rss, errors, (double)completed * (w->expected + w->upload) / seconds / 1048576, latencies[completed / 2] * 1e6, latencies[(long)(completed * 0.99)] * 1e6, rss, completed, completed / seconds, seconds, w->name);
    return errors ? 1 : 0;
}
