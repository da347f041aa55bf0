// Curlew — keeping only responses with the expected status codes.

extension ApiResponse {
    /// Returns the response when its status code is in `statusCodes`.
    ///
    /// - Throws: ``CurlewError/statusCode(_:)`` with this response otherwise.
    public func filter(statusCodes: some RangeExpression<Int>) throws(CurlewError) -> ApiResponse {
        guard statusCodes.contains(statusCode) else { throw .statusCode(self) }
        return self
    }

    /// Returns the response when its status code is `statusCode`.
    ///
    /// - Throws: ``CurlewError/statusCode(_:)`` with this response otherwise.
    public func filter(statusCode: Int) throws(CurlewError) -> ApiResponse {
        try filter(statusCodes: statusCode...statusCode)
    }

    /// Returns the response when its status code is 200–299.
    ///
    /// - Throws: ``CurlewError/statusCode(_:)`` with this response otherwise.
    public func filterSuccessfulStatusCodes() throws(CurlewError) -> ApiResponse {
        try filter(statusCodes: 200...299)
    }

    /// Returns the response when its status code is 200–399.
    ///
    /// - Throws: ``CurlewError/statusCode(_:)`` with this response otherwise.
    public func filterSuccessfulStatusAndRedirectCodes() throws(CurlewError) -> ApiResponse {
        try filter(statusCodes: 200...399)
    }
}
