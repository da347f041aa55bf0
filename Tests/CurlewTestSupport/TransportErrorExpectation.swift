// Curlew — expecting an engine call to fail, and getting its error to check.

import CurlewEngine
import HTTPTypes
import Testing

/// Expects `operation` to throw a TransportError and returns it.
package func transportError(
    _ operation: () async throws -> TransportResponse, sourceLocation: SourceLocation = #_sourceLocation
) async -> TransportError? {
    do {
        let response = try await operation()
        Issue.record("expected a TransportError, got status \(response.status.code)", sourceLocation: sourceLocation)
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        Issue.record("expected a TransportError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
