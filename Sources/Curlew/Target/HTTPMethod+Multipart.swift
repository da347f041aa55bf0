// Curlew — which methods carry a multipart form.

extension HTTPRequest.Method {
    /// Whether requests of this method can carry a `multipart/form-data` body, as Moya decides: POST,
    /// PUT, PATCH and CONNECT can; a multipart task on another method fails with
    /// ``CurlewError/multipartEncoding(_:)``.
    public var supportsMultipart: Bool {
        self == .post || self == .put || self == .patch || self == .connect
    }
}
