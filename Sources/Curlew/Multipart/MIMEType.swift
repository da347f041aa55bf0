// Curlew — the MIME type a file part gets from its name when none is given.

/// Common MIME types by file name extension, for file parts sent without a type.
enum MIMEType {
    /// The type for `fileName`'s extension (case-insensitive), `application/octet-stream` when unknown.
    static func forFileName(_ fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return "application/octet-stream" }
        return types[fileName[fileName.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    private static let types: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "csv": "text/csv", "html": "text/html", "htm": "text/html",
        "css": "text/css", "js": "text/javascript", "md": "text/markdown", "xml": "application/xml",
        "json": "application/json", "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml", "heic": "image/heic", "ico": "image/vnd.microsoft.icon",
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "mp4": "video/mp4", "mov": "video/quicktime",
        "webm": "video/webm", "wasm": "application/wasm",
    ]
}
