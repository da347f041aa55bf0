// Curlew — typed wrappers for libcurl's variadic calls, which Swift cannot import.
#ifndef CURLEW_CCURLSHIMS_H
#define CURLEW_CCURLSHIMS_H

#include <curl/curl.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Curlew builds against the headers of libcurl 7.81.0 (Ubuntu 22.04) or later, its floor at run time
/// too (see `LibcurlVersion.minimumSupported`). Everything the code names that is newer than the floor
/// is a constant or a wrapper in this file.
#if LIBCURL_VERSION_NUM < 0x075100
#error "Curlew needs the headers of libcurl 7.81.0 or later (libcurl4-openssl-dev on Ubuntu 22.04, Debian 12 and later)"
#endif

/// Result codes added after the floor, by their numbers: libcurl never renumbers a code, and a library
/// older than the headers (or headers older than the library) may still return them.
enum {
    /// CURLE_UNRECOVERABLE_POLL, added in 7.84.0.
    curlew_code_unrecoverable_poll = 99,
    /// CURLE_TOO_LARGE, added in 8.6.0.
    curlew_code_too_large = 100,
    /// CURLE_ECH_REQUIRED, added in 8.8.0.
    curlew_code_ech_required = 101,
};

typedef size_t (*curlew_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*curlew_closesocket_callback)(void *clientp, curl_socket_t item);
typedef curl_socket_t (*curlew_opensocket_callback)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*curlew_socket_callback)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*curlew_timer_callback)(CURLM *multi, long timeout_ms, void *userp);
typedef int (*curlew_seek_callback)(void *userp, curl_off_t offset, int origin);
typedef int (*curlew_trailer_callback)(struct curl_slist **list, void *userdata);
typedef int (*curlew_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
typedef int (*curlew_prereq_callback)(void *clientp, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port, int conn_local_port);

CURLcode curlew_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode curlew_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
CURLcode curlew_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value);
CURLcode curlew_easy_setopt_data_callback(CURL *easy, CURLoption option, curlew_data_callback callback);
CURLcode curlew_easy_setopt_closesocket_callback(CURL *easy, curlew_closesocket_callback callback);
CURLcode curlew_easy_setopt_opensocket_callback(CURL *easy, curlew_opensocket_callback callback);
CURLcode curlew_easy_setopt_prereq_callback(CURL *easy, curlew_prereq_callback callback);
CURLcode curlew_easy_setopt_seek_callback(CURL *easy, curlew_seek_callback callback);
CURLcode curlew_easy_setopt_xferinfo_callback(CURL *easy, curlew_xferinfo_callback callback);
CURLcode curlew_easy_setopt_trailer_callback(CURL *easy, curlew_trailer_callback callback);

/// libcurl's return codes for pausing and failing from callbacks, and its pause bits.
enum {
    curlew_write_pause = CURL_WRITEFUNC_PAUSE,
    curlew_read_pause = CURL_READFUNC_PAUSE,
    curlew_read_abort = CURL_READFUNC_ABORT,
    curlew_pause_receive = CURLPAUSE_RECV,
    curlew_pause_send = CURLPAUSE_SEND,
};

/// Bytes the application has written to a TCP socket so far (sent plus still queued), or
/// UINT64_MAX when the socket is not TCP: a socket that reported writable and whose count did not
/// move was not written to.
unsigned long long curlew_socket_written(int fd);

/// Sets a blob option; libcurl copies the bytes (CURL_BLOB_COPY).
CURLcode curlew_easy_setopt_blob(CURL *easy, CURLoption option, const void *data, size_t length);
CURLcode curlew_easy_setopt_share(CURL *easy, CURLSH *share);
CURLSHcode curlew_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

CURLMcode curlew_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode curlew_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode curlew_multi_setopt_socket_callback(CURLM *multi, curlew_socket_callback callback);
CURLMcode curlew_multi_setopt_timer_callback(CURLM *multi, curlew_timer_callback callback);

CURLcode curlew_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode curlew_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode curlew_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);
CURLcode curlew_easy_getinfo_slist(CURL *easy, CURLINFO info, struct curl_slist **value);

/// The CURLMsg fields Swift needs, read without touching the C union.
int curlew_multi_info_read(CURLM *multi, CURL **easy, CURLcode *result);

/// The fields of libcurl's build information that every libcurl has (those of `CURLVERSION_FIRST`),
/// read from the library that is loaded, whatever its age.
typedef struct {
    /// 0xXXYYZZ: major, minor, patch.
    unsigned int version_num;
    /// The `CURL_VERSION_*` feature bits.
    int features;
    /// Whether libcurl was built with zlib (it decodes gzip and deflate).
    int has_libz;
    /// The TLS library, e.g. "OpenSSL/3.0.19", or NULL.
    const char *ssl_version;
} curlew_runtime_info;

/// The loaded library's version and features. Reads only the fields its reported `age` has.
curlew_runtime_info curlew_runtime(void);

/// Names the calling thread (shown by `top -H`, gdb and perf).
void curlew_set_thread_name(const char *name);

/// The calling thread's kernel thread id.
int curlew_thread_id(void);

/// Ignores SIGPIPE process-wide, once: a write to a peer-closed socket must return EPIPE, not kill.
void curlew_ignore_sigpipe(void);

#endif
