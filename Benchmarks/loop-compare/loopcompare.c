/* Curlew — throwaway harness: curl_multi_poll vs curl_multi_socket_action + epoll, one thread.
 *
 * usage: loopcompare poll|socket URL INFLIGHT TOTAL
 * Keeps INFLIGHT transfers going until TOTAL have completed; every response must be 200 with a body.
 * Prints requests/s, the thread's CPU time per request, and epoll_ctl calls per request. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long completed, failed, started, total_wanted;
static long epoll_ctls;
static int epfd;
static long timeout_ms = -1;
static CURLM *multi;
static const char *url;
static unsigned char *registered; /* per fd: registered events (lazy removal) */
static unsigned char *wanted;

static size_t on_write(char *p, size_t s, size_t n, void *u) { (void)p; *(long *)u += (long)(s * n); return s * n; }

static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void ctl(int op, int fd, unsigned ev) {
    struct epoll_event e = {.events = ev, .data.fd = fd};
    epoll_ctl(epfd, op, fd, &e);
    epoll_ctls++;
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *u, void *sp) {
    (void)e; (void)u; (void)sp;
    unsigned ev = what == CURL_POLL_IN ? EPOLLIN : what == CURL_POLL_OUT ? EPOLLOUT : what == CURL_POLL_INOUT ? (EPOLLIN | EPOLLOUT) : 0;
    wanted[s] = (unsigned char)ev;
    if (ev == 0) return 0; /* lazy: stays registered until an event or close */
    if (registered[s] == ev) return 0;
    ctl(registered[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, ev);
    registered[s] = (unsigned char)ev;
    return 0;
}

static int on_close(void *u, curl_socket_t s) {
    (void)u;
    if (registered[s]) ctl(EPOLL_CTL_DEL, s, 0);
    registered[s] = wanted[s] = 0;
    return close(s);
}

static int on_timer(CURLM *m, long ms, void *u) { (void)m; (void)u; timeout_ms = ms; return 0; }

static long bodies[1 << 16];

static void add_transfer(CURL *e) {
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 60L);
    curl_multi_add_handle(multi, e);
    started++;
}

static void reap(void) {
    int q;
    CURLMsg *m;
    while ((m = curl_multi_info_read(multi, &q))) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL *e = m->easy_handle;
        long code = 0, *body;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&body);
        if (m->data.result != CURLE_OK || code != 200 || *body <= 0) failed++;
        completed++;
        curl_multi_remove_handle(multi, e);
        *body = 0;
        if (started < total_wanted) add_transfer(e); else curl_easy_cleanup(e);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: %s poll|socket URL INFLIGHT TOTAL\n", argv[0]); return 2; }
    int socket_mode = strcmp(argv[1], "socket") == 0;
    url = argv[2];
    long inflight = atol(argv[3]);
    total_wanted = atol(argv[4]);
    struct rlimit r; getrlimit(RLIMIT_NOFILE, &r); r.rlim_cur = r.rlim_max; setrlimit(RLIMIT_NOFILE, &r);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, inflight + 16);
    registered = calloc(1 << 20, 1);
    wanted = calloc(1 << 20, 1);
    if (socket_mode) {
        epfd = epoll_create1(EPOLL_CLOEXEC);
        curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    }
    double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < inflight && i < total_wanted; i++) {
        CURL *e = curl_easy_init();
        curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)&bodies[i]);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &bodies[i]);
        add_transfer(e);
    }
    /* add_transfer resets nothing; WRITEDATA/PRIVATE survive re-adds of the same handle. */
    struct epoll_event events[1024];
    int running = 1;
    while (completed < total_wanted) {
        if (socket_mode) {
            int n = epoll_wait(epfd, events, 1024, (int)timeout_ms);
            for (int i = 0; i < n; i++) {
                int fd = events[i].data.fd;
                if (!wanted[fd]) { if (registered[fd]) { ctl(EPOLL_CTL_DEL, fd, 0); registered[fd] = 0; } continue; }
                int flags = (events[i].events & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) |
                            (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) | (events[i].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
                curl_multi_socket_action(multi, fd, flags, &running);
            }
            if (n == 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        } else {
            curl_multi_perform(multi, &running);
            reap();
            if (completed >= total_wanted) break;
            curl_multi_poll(multi, NULL, 0, 1000, NULL);
            continue;
        }
        reap();
    }
    double wall = now(CLOCK_MONOTONIC) - wall0, cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    printf("mode=%s inflight=%ld total=%ld failed=%ld wall=%.3fs req/s=%.0f cpu/req=%.2fus epoll_ctl/req=%.3f\n",
           socket_mode ? "socket_action+epoll" : "multi_poll", inflight, completed, failed, wall, completed / wall,
           cpu * 1e6 / completed, (double)epoll_ctls / completed);
    curl_multi_cleanup(multi);
    return failed ? 1 : 0;
}
