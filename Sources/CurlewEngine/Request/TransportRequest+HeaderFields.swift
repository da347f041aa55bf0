// Curlew — URLRequest's header-field calls on TransportRequest, for request closures and plugins.

import HTTPTypes

extension TransportRequest {
    /// Sets a header field from strings, replacing every field whose name matches ignoring case (as
    /// `URLRequest.setValue(_:forHTTPHeaderField:)` does); `nil` removes the field.
    ///
    /// - Parameters:
    ///   - value: The value, or nil to remove the field.
    ///   - name: The field name, e.g. `Content-Type`.
    /// - Throws: ``TransportError/Code/invalidHeader`` when the name is not an HTTP token or the value
    ///   holds CR, LF or NUL; the request is then unchanged.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) throws(TransportError) {
        guard let value else {
            guard let fieldName = HTTPField.Name(name) else {
                throw TransportError(.invalidHeader, message: "header name \(String(reflecting: name)) is not a valid HTTP token")
            }
            headerFields[fieldName] = nil
            return
        }
        let field = try HeaderValidation.field(name: name, value: value)
        headerFields[field.name] = nil
        headerFields.append(field)
    }

    /// Adds a header field from strings, keeping any field of the same name (sent as a separate line).
    ///
    /// - Throws: ``TransportError/Code/invalidHeader`` when the name is not an HTTP token or the value
    ///   holds CR, LF or NUL; the request is then unchanged.
    public mutating func addValue(_ value: String, forHTTPHeaderField name: String) throws(TransportError) {
        headerFields.append(try HeaderValidation.field(name: name, value: value))
    }

    /// The value of a header field, matching the name ignoring case; several fields of the name are
    /// joined with `, ` (nil when there is none or the name is not an HTTP token).
    public func value(forHTTPHeaderField name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let values = headerFields[values: fieldName]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
