// Curlew — what a pooled easy handle still carries from its last transfer.

/// The options a pooled easy handle carries beyond the session defaults.
///
/// `curl_easy_reset` and the defaults again cost about 4,000 instructions per request, most of it
/// freeing and copying options that the next request would set to the same values. A *plain* request
/// (see `TransferContext.plainShape`) sets only options that every plain request of the same shape sets
/// again — the pointers to its context, its URL, its header list, its timeout and HTTP version — so
/// its handle goes back to the pool as it is, and the next plain request of that shape skips the
/// reset. Any other request starts from a reset handle.
enum HandleResidue: Equatable {
    /// Reset: the session defaults only.
    case defaults
    /// A plain request's options: with the session's TLS options (an https request) or without, with or
    /// without waiting for a connection that may carry several requests (PIPEWAIT and the prereq
    /// callback), and a GET's or a POST's of a body in memory (its size and bytes).
    case plain(tls: Bool, multiplex: Bool, posts: Bool)
}
