// Curlew — refusing header names and values that would be sent other than as given.

public import HTTPTypes

/// Checks header names and values before they reach the wire.
public enum HeaderValidation {
    /// Builds a field from strings, refusing a name that is not an HTTP token and a value with CR, LF or NUL.
    ///
    /// - Throws: ``TransportError/Code/invalidHeader`` naming the offending header.
    public static func field(name: String, value: String) throws(TransportError) -> HTTPField {
        guard let fieldName = HTTPField.Name(name) else {
            throw TransportError(.invalidHeader, message: "header name \(String(reflecting: name)) is not a valid HTTP token")
        }
        guard isSendable(value: value) else {
            throw TransportError(
                .invalidHeader, message: "value of header \(name) contains CR, LF or NUL and would not be sent as given")
        }
        return HTTPField(name: fieldName, value: value)
    }

    /// Whether a header value can be sent as given: no CR, LF or NUL.
    public static func isSendable(value: String) -> Bool {
        var value = value
        // Over the contiguous bytes: iterating `utf8` cost about 60 instructions a byte.
        return value.withUTF8 { bytes in
            for byte in bytes where byte <= 0x0D && (byte == 0x0D || byte == 0x0A || byte == 0x00) {
                return false
            }
            return true
        }
    }
}
