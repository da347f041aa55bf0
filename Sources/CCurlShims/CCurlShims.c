#define _GNU_SOURCE
// Curlew — typed wrappers for libcurl's variadic calls.
#include "CCurlShims.h"
#include <string.h>
#include <signal.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

CURLcode curlew_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode curlew_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode curlew_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode curlew_easy_setopt_data_callback(CURL *easy, CURLoption option, curlew_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

CURLcode curlew_easy_setopt_closesocket_callback(CURL *easy, curlew_closesocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

CURLcode curlew_easy_setopt_prereq_callback(CURL *easy, curlew_prereq_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode curlew_easy_setopt_opensocket_callback(CURL *easy, curlew_opensocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}

CURLcode curlew_easy_setopt_seek_callback(CURL *easy, curlew_seek_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
}

CURLcode curlew_easy_setopt_xferinfo_callback(CURL *easy, curlew_xferinfo_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode curlew_easy_setopt_trailer_callback(CURL *easy, curlew_trailer_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_TRAILERFUNCTION, callback);
}

unsigned long long curlew_socket_written(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 || length < sizeof info) return ~0ULL;
    return (unsigned long long)info.tcpi_bytes_sent + info.tcpi_notsent_bytes;
}

CURLcode curlew_easy_setopt_blob(CURL *easy, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(easy, option, &blob);
}

CURLcode curlew_easy_setopt_share(CURL *easy, CURLSH *share) {
    return curl_easy_setopt(easy, CURLOPT_SHARE, share);
}

CURLSHcode curlew_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

CURLMcode curlew_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode curlew_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode curlew_multi_setopt_socket_callback(CURLM *multi, curlew_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

CURLMcode curlew_multi_setopt_timer_callback(CURLM *multi, curlew_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

CURLcode curlew_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode curlew_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode curlew_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode curlew_easy_getinfo_slist(CURL *easy, CURLINFO info, struct curl_slist **value) {
    return curl_easy_getinfo(easy, info, value);
}

int curlew_multi_info_read(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

void curlew_ignore_sigpipe(void) {
    signal(SIGPIPE, SIG_IGN);
}

void curlew_set_thread_name(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int curlew_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

curlew_runtime_info curlew_runtime(void) {
    curlew_runtime_info info;
    memset(&info, 0, sizeof info);
    // Asking for the first age: a library returns its own struct, of its own age, and every one of
    // them starts with these fields.
    const curl_version_info_data *data = curl_version_info(CURLVERSION_FIRST);
    if (data == NULL) return info;
    info.version_num = data->version_num;
    info.features = data->features;
    info.has_libz = data->libz_version != NULL;
    info.ssl_version = data->ssl_version;
    return info;
}
