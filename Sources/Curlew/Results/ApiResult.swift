// Curlew — a typed result decoded by status code.

/// The outcome of an API call that got a response: a decoded value, the API's decoded error message, or
/// an error response that did not decode.
///
/// Client-side failures — transport errors, cancellation, a 2xx body that does not decode — are not
/// results: they are thrown as ``CurlewError``. Expected API errors (401 with the API's error body) and
/// unexpected ones (an HTML 500) are values you switch over.
public enum ApiResult<Value, ApiErrorMessage> {
    /// A 2xx response whose body decoded as `Value`.
    case success(Value, ApiResponse)
    /// A non-2xx response whose body decoded as the error-message type.
    case failure(ApiErrorMessage, ApiResponse)
    /// A non-2xx response whose body did not decode as the error-message type.
    case unexpected(UnexpectedApiError, ApiResponse)

    /// The decoded value, for a success.
    public var value: Value? {
        if case .success(let value, _) = self { return value }
        return nil
    }

    /// The decoded error message, for an expected API error.
    public var errorMessage: ApiErrorMessage? {
        if case .failure(let message, _) = self { return message }
        return nil
    }

    /// The undecodable error, for an unexpected API error.
    public var unexpectedError: UnexpectedApiError? {
        if case .unexpected(let error, _) = self { return error }
        return nil
    }

    /// The response, in every case.
    public var response: ApiResponse {
        switch self {
        case .success(_, let response), .failure(_, let response), .unexpected(_, let response): response
        }
    }

    /// The status code, in every case.
    public var statusCode: Int { response.statusCode }

    /// Whether the call succeeded.
    public var isSuccess: Bool { value != nil }

    /// The value, or a thrown ``ApiResultError`` carrying the failure.
    public func get() throws(ApiResultError<ApiErrorMessage>) -> Value {
        switch self {
        case .success(let value, _): return value
        case .failure(let message, let response): throw .apiError(message, response)
        case .unexpected(let error, let response): throw .unexpected(error, response)
        }
    }
}

/// An API error thrown by ``ApiResult/get()``.
public enum ApiResultError<ApiErrorMessage>: Error {
    /// The API's decoded error message.
    case apiError(ApiErrorMessage, ApiResponse)
    /// An error response that did not decode.
    case unexpected(UnexpectedApiError, ApiResponse)
}

extension ApiResult: Sendable where Value: Sendable, ApiErrorMessage: Sendable {}
extension ApiResult: Equatable where Value: Equatable, ApiErrorMessage: Equatable {}
extension ApiResultError: Sendable where ApiErrorMessage: Sendable {}
