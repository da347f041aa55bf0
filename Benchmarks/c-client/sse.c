/* Curlew benchmarks — server-sent events (issue 17), the C reference: libcurl with an event-stream parser in
 * its write callback.
 *
 * The parser follows the WHATWG event-stream rules on bytes as they arrive: one UTF-8 BOM stripped at the
 * start of the stream; lines end at CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
 * next are one line end); complete lines are parsed in place in libcurl's buffer, a line split across
 * chunks is carried in a growing line buffer; an empty line dispatches; ':' starts a comment; field = before
 * the first ':', value = after it with one leading space removed (no ':': the whole line, empty value);
 * `data` appends value + LF to the data buffer, `event` sets the type buffer, `id` (without NUL) sets the
 * last event ID, `retry` (all ASCII digits) the reconnection time, other fields are ignored. Dispatch: an
 * empty data buffer resets the type and dispatches nothing; otherwise one trailing LF is removed and the
 * event is COPIED (data malloc'd and memcpy'd; its type and id are the parser's buffers), handed to the
 * consumer and freed. It does not decode UTF-8 (Curlew's events are Swift Strings, so Curlew validates
 * every line as UTF-8; this client does not).
 *
 * usage: bench-sse-c parse URL EVENTS DATA_BYTES [FILE]
 *            one stream read at full speed; EVENTS and DATA_BYTES are what the file holds (checked); with
 *            FILE (the same file, local), then the parser alone on it in memory, for comparison
 *        bench-sse-c streams URL COUNT EVENTS [CA_FILE]
 *            COUNT streams at once on one multi handle (curl_multi_socket_action + epoll, as bench.c), each
 *            expected to deliver events with ids 1…EVENTS in order; with CA_FILE over HTTPS and HTTP/2
 *            (PIPEWAIT, so streams share connections up to the server's limit).
 * Prints one JSON line of figures. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static double cpu_seconds(void) {
    struct rusage u; getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* The heap malloc has handed out (small chunks in use plus mmapped chunks), KiB. */
static long heap_kib(void) { struct mallinfo2 m = mallinfo2(); return (long)((m.uordblks + m.hblkhd) / 1024); }

static long status_kib(const char *key) {
    long value = 0; size_t n = strlen(key); char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, key, n)) value = atol(line + n);
    if (f) fclose(f);
    return value;
}

/* A growing byte buffer. */
typedef struct { char *bytes; size_t length, capacity; } buffer;

static int reserve(buffer *b, size_t extra) {
    if (b->length + extra <= b->capacity) return 0;
    size_t capacity = b->capacity ? b->capacity * 2 : 256;
    while (capacity < b->length + extra) capacity *= 2;
    char *grown = realloc(b->bytes, capacity);
    if (!grown) return -1;
    b->bytes = grown; b->capacity = capacity;
    return 0;
}

static int append(buffer *b, const char *p, size_t n) {
    if (reserve(b, n)) return -1;
    memcpy(b->bytes + b->length, p, n);
    b->length += n;
    return 0;
}

/* One dispatched event, owned by the consumer until it returns. */
typedef struct { const char *type; size_t type_length; char *data; size_t data_length; const char *id; size_t id_length; } event;

struct parser;
typedef void (*consumer)(struct parser *p, const event *e);

typedef struct parser {
    buffer line, data, type, id;
    long retry_ms;
    int after_cr;      /* the last byte seen was a CR: an LF right after it ends nothing */
    int bom_checked;   /* 0: nothing seen yet; 1..2: that many BOM bytes matched; 3: past the start */
    consumer consume;
    void *context;
    int failed;
} parser;

static void dispatch(parser *p) {
    if (p->data.length == 0) { p->type.length = 0; return; }
    size_t length = p->data.length - 1; /* one trailing LF */
    event e = {.type = p->type.length ? p->type.bytes : "message", .type_length = p->type.length ? p->type.length : 7,
               .data = malloc(length ? length : 1), .data_length = length, .id = p->id.bytes ? p->id.bytes : "", .id_length = p->id.length};
    if (!e.data) { p->failed = 1; return; }
    memcpy(e.data, p->data.bytes, length);
    p->data.length = 0;
    p->type.length = 0;
    p->consume(p, &e);
    free(e.data);
}

static void field(parser *p, const char *line, size_t length) {
    if (length == 0) { dispatch(p); return; }
    if (line[0] == ':') return;
    const char *colon = memchr(line, ':', length);
    size_t name = colon ? (size_t)(colon - line) : length;
    const char *value = colon ? colon + 1 : line + length;
    size_t value_length = colon ? length - name - 1 : 0;
    if (value_length && *value == ' ') { value++; value_length--; }
    if (name == 4 && !memcmp(line, "data", 4)) {
        if (append(&p->data, value, value_length) || append(&p->data, "\n", 1)) p->failed = 1;
    } else if (name == 5 && !memcmp(line, "event", 5)) {
        p->type.length = 0;
        if (append(&p->type, value, value_length)) p->failed = 1;
    } else if (name == 2 && !memcmp(line, "id", 2)) {
        if (!memchr(value, 0, value_length)) {
            p->id.length = 0;
            if (append(&p->id, value, value_length) || reserve(&p->id, 1)) p->failed = 1;
            else p->id.bytes[p->id.length] = 0;
        }
    } else if (name == 5 && !memcmp(line, "retry", 5)) {
        long ms = 0; size_t i;
        for (i = 0; i < value_length && value[i] >= '0' && value[i] <= '9'; i++) ms = ms < 86400000 ? ms * 10 + (value[i] - '0') : ms;
        if (value_length && i == value_length) p->retry_ms = ms < 86400000 ? ms : 86400000;
    }
}

/* Feeds the next bytes of the stream. */
static void feed(parser *p, const char *bytes, size_t n) {
    const char *s = bytes, *end = bytes + n;
    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    while (p->bom_checked < 3 && s < end) {
        if ((unsigned char)*s == bom[p->bom_checked]) { p->bom_checked++; s++; continue; }
        /* Not a BOM: the bytes matched so far belong to the first line. */
        if (p->bom_checked && append(&p->line, (const char *)bom, (size_t)p->bom_checked)) p->failed = 1;
        p->bom_checked = 3;
    }
    if (s == end) return;
    if (p->after_cr && s < end && *s == '\n') s++;
    p->after_cr = 0;
    while (s < end) {
        const char *e = s;
        while (e < end && *e != '\n' && *e != '\r') e++;
        if (e == end) { if (append(&p->line, s, (size_t)(end - s))) p->failed = 1; return; }
        if (p->line.length) {
            if (append(&p->line, s, (size_t)(e - s))) { p->failed = 1; return; }
            field(p, p->line.bytes, p->line.length);
            p->line.length = 0;
        } else {
            field(p, s, (size_t)(e - s));
        }
        if (*e == '\r') {
            if (e + 1 == end) { p->after_cr = 1; return; }
            if (e[1] == '\n') e++;
        }
        s = e + 1;
    }
}

static size_t on_write(char *bytes, size_t size, size_t count, void *context) {
    parser *p = context;
    feed(p, bytes, size * count);
    return p->failed ? 0 : size * count;
}

/* parse: one stream at full speed; the consumer counts the events and their data bytes and reads each
   event's first data byte (Curlew's client does the same). */
static long total_events, total_data;
static unsigned long checksum;

static void count_event(parser *p, const event *e) {
    (void)p;
    total_events++;
    total_data += (long)e->data_length;
    checksum += e->data_length ? (unsigned char)e->data[0] : 0;
}

/* The parser alone, for comparison: the file read into memory and fed in 16 KiB chunks (libcurl's default
   buffer) on this thread. Returns CPU ns per event, or -1 when the file's events are not all found. */
static double parser_alone(const char *file, long expected_events, long expected_data) {
    FILE *f = fopen(file, "rb");
    if (!f) return -1;
    buffer all = {0};
    char block[1 << 16];
    size_t n;
    while ((n = fread(block, 1, sizeof block, f)) > 0) if (append(&all, block, n)) { fclose(f); return -1; }
    fclose(f);
    parser p = {.consume = count_event};
    unsigned long first_checksum = checksum;
    total_events = total_data = 0; checksum = 0;
    double cpu0 = cpu_seconds();
    for (size_t offset = 0; offset < all.length; offset += 16384) {
        size_t chunk = all.length - offset < 16384 ? all.length - offset : 16384;
        feed(&p, all.bytes + offset, chunk);
    }
    double cpu = cpu_seconds() - cpu0;
    free(all.bytes);
    if (p.failed || total_events != expected_events || total_data != expected_data || checksum != first_checksum) return -1;
    return cpu * 1e9 / total_events;
}

static int parse_rate(const char *url, long expected_events, long expected_data, const char *file) {
    parser p = {.consume = count_event};
    long idle_rss = status_kib("VmRSS:");
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &p);
    struct curl_slist *headers = curl_slist_append(curl_slist_append(NULL, "Accept: text/event-stream"), "Cache-Control: no-cache");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    const char *size = getenv("BENCH_SSE_C_BUFFER");
    if (size) curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, atol(size));
    double cpu0 = cpu_seconds(), t0 = now();
    CURLcode rc = curl_easy_perform(easy);
    double seconds = now() - t0, cpu = cpu_seconds() - cpu0;
    long code = 0; char *type = NULL;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &type);
    int ok = rc == CURLE_OK && code == 200 && type && !strncmp(type, "text/event-stream", 17) && !p.failed
        && total_events == expected_events && total_data == expected_data;
    char error[200] = "";
    if (!ok) snprintf(error, sizeof error, "curl %d status %ld: %ld events / %ld data bytes, expected %ld / %ld", (int)rc, code, total_events, total_data, expected_events, expected_data);
    long events = total_events, data = total_data, peak = status_kib("VmHWM:");
    unsigned long sum = checksum;
    double alone = file ? parser_alone(file, expected_events, expected_data) : 0;
    if (ok && alone < 0) { ok = 0; snprintf(error, sizeof error, "the parser alone did not find the file's events"); }
    printf("{\"client\":\"c-libcurl\",\"workload\":\"sse-parse-rate\",\"events\":%ld,\"data_bytes\":%ld,\"checksum\":%lu,\"seconds\":%.6f,"
           "\"events_per_second\":%.1f,\"cpu_ns_per_event\":%.1f,\"cpu_percent\":%.1f,\"mibps\":%.2f,\"idle_rss_kib\":%ld,\"peak_rss_kib\":%ld,",
           events, data, sum, seconds, events / seconds, cpu * 1e9 / (events ? events : 1), cpu / seconds * 100,
           expected_data / seconds / 1048576, idle_rss, peak);
    if (file && alone > 0) printf("\"parser_ns_per_event\":%.1f,", alone);
    printf("\"valid\":%s,\"first_error\":\"%s\"}\n", ok ? "true" : "false", error);
    return ok ? 0 : 1;
}

/* streams: COUNT streams at once, each checked: ids 1…EVENTS in order, nothing missing. */
typedef struct {
    parser p;
    CURL *easy;
    long next_id, events;
    double first, last, largest_gap;
    int wrong;
} stream;

static long expected_per_stream, all_events, opened_streams, wrong_streams;
static double run_start;

static void check_event(parser *p, const event *e) {
    stream *s = p->context;
    double t = now();
    char *end = NULL;
    long id = strtol(e->id, &end, 10);
    if (e->id_length == 0 || end != e->id + e->id_length || id != s->next_id) s->wrong = 1;
    s->next_id = id + 1;
    if (s->events == 0) { s->first = t; opened_streams++; }
    else if (t - s->last > s->largest_gap) s->largest_gap = t - s->last;
    s->last = t;
    s->events++;
    all_events++;
}

static int compare_doubles(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static int epfd;
static long timeout_ms = -1;
static CURLM *multi;
static unsigned char *registered, *wanted;

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

static int streams(const char *url, long count, long events, const char *ca) {
    expected_per_stream = events;
    struct rlimit r; getrlimit(RLIMIT_NOFILE, &r); r.rlim_cur = r.rlim_max; setrlimit(RLIMIT_NOFILE, &r);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, count + 16);
    if (ca) curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 256L);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    registered = calloc(1 << 20, 1); wanted = calloc(1 << 20, 1);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct curl_slist *headers = curl_slist_append(curl_slist_append(NULL, "Accept: text/event-stream"), "Cache-Control: no-cache");
    long idle_rss = status_kib("VmRSS:"), idle_heap = heap_kib();
    stream *all = calloc((size_t)count, sizeof(stream));
    double cpu0 = cpu_seconds();
    run_start = now();
    for (long i = 0; i < count; i++) {
        stream *s = &all[i];
        s->p.consume = check_event; s->p.context = s; s->next_id = 1;
        CURL *e = s->easy = curl_easy_init();
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &s->p);
        curl_easy_setopt(e, CURLOPT_PRIVATE, s);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close);
        if (ca) {
            curl_easy_setopt(e, CURLOPT_CAINFO, ca);
            curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
            curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
            curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
        }
        curl_multi_add_handle(multi, e);
    }
    struct epoll_event ready[1024];
    long done = 0, failed = 0, open_rss = 0, mid_rss = 0, mid_heap = 0;
    double all_open_at = 0, cpu_open = 0;
    long events_open = 0;
    int running;
    while (done < count) {
        int n = epoll_wait(epfd, ready, 1024, (int)timeout_ms);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (!wanted[fd]) { if (registered[fd]) { ctl(EPOLL_CTL_DEL, fd, 0); registered[fd] = 0; } continue; }
            int flags = (ready[i].events & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) | (ready[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) | (ready[i].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(multi, fd, flags, &running);
        }
        if (n <= 0 || timeout_ms == 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        /* Every stream open and past its first event: the idle figures. */
        if (!all_open_at && opened_streams == count) {
            all_open_at = now(); cpu_open = cpu_seconds(); events_open = all_events;
            open_rss = status_kib("VmRSS:");
        }
        if (all_open_at && !mid_rss && all_events >= count * expected_per_stream / 2) {
            mid_rss = status_kib("VmRSS:"); mid_heap = heap_kib();
        }
        int q; CURLMsg *m;
        while ((m = curl_multi_info_read(multi, &q))) {
            if (m->msg != CURLMSG_DONE) continue;
            stream *s; long code = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (m->data.result != CURLE_OK || code != 200) failed++;
            if (s->wrong || s->events != expected_per_stream) wrong_streams++;
            curl_multi_remove_handle(multi, m->easy_handle);
            done++;
        }
    }
    double end = now(), cpu = cpu_seconds() - cpu0;
    /* When each stream's first event arrived, from the start: the ramp's median and 90th percentile. */
    double *firsts = calloc((size_t)count, sizeof(double));
    for (long i = 0; i < count; i++) firsts[i] = all[i].events ? all[i].first - run_start : 1e9;
    qsort(firsts, (size_t)count, sizeof(double), compare_doubles);
    double p50 = firsts[count / 2], p90 = firsts[count * 9 / 10];
    double min_span = 1e9, max_span = 0, largest_gap = 0, last_first = 0;
    long fewest = expected_per_stream, most = 0;
    for (long i = 0; i < count; i++) {
        stream *s = &all[i];
        double span = s->events > 1 ? s->last - s->first : 0;
        if (span < min_span) min_span = span;
        if (span > max_span) max_span = span;
        if (s->largest_gap > largest_gap) largest_gap = s->largest_gap;
        if (s->first - run_start > last_first) last_first = s->first - run_start;
        if (s->events < fewest) fewest = s->events;
        if (s->events > most) most = s->events;
    }
    int ok = failed == 0 && wrong_streams == 0;
    /* The steady state: from all streams open to the end (every stream ends within a second of the others). */
    double steady_cpu = cpu_seconds() - cpu0 - (cpu_open - cpu0);
    printf("{\"client\":\"c-libcurl\",\"streams\":%ld,\"events\":%ld,\"expected_events\":%ld,\"fewest_events\":%ld,\"most_events\":%ld,"
           "\"wrong_streams\":%ld,\"failed_streams\":%ld,\"seconds\":%.3f,\"all_open_seconds\":%.3f,\"min_span_seconds\":%.3f,\"max_span_seconds\":%.3f,"
           "\"largest_gap_seconds\":%.3f,\"idle_rss_kib\":%ld,\"open_rss_kib\":%ld,\"mid_rss_kib\":%ld,\"peak_rss_kib\":%ld,\"idle_heap_kib\":%ld,\"mid_heap_kib\":%ld,\"rss_per_stream_kib\":%.2f,"
           "\"cpu_ns_per_event\":%.1f,\"steady_cpu_ns_per_event\":%.1f,\"cpu_percent\":%.1f,\"last_first_event_seconds\":%.3f,"
           "\"first_event_p50_seconds\":%.3f,\"first_event_p90_seconds\":%.3f,\"valid\":%s,\"first_error\":\"%s\"}\n",
           count, all_events, count * expected_per_stream, fewest, most, wrong_streams, failed, end - run_start, all_open_at ? all_open_at - run_start : -1,
           min_span, max_span, largest_gap, idle_rss, open_rss, mid_rss, status_kib("VmHWM:"), idle_heap, mid_heap, ((mid_rss ? mid_rss : open_rss) - idle_rss) / (double)count,
           cpu * 1e9 / (all_events ? all_events : 1), steady_cpu * 1e9 / ((all_events - events_open) ? (all_events - events_open) : 1),
           cpu / (end - run_start) * 100, last_first, p50, p90, ok ? "true" : "false", ok ? "" : "streams failed or missed events");
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    if (argc >= 5 && !strcmp(argv[1], "parse")) return parse_rate(argv[2], atol(argv[3]), atol(argv[4]), argc > 5 ? argv[5] : NULL);
    if (argc >= 5 && !strcmp(argv[1], "streams")) return streams(argv[2], atol(argv[3]), atol(argv[4]), argc > 5 ? argv[5] : NULL);
    fprintf(stderr, "usage: %s parse URL EVENTS DATA_BYTES [FILE] | streams URL COUNT EVENTS [CA_FILE]\n", argv[0]);
    return 2;
}
