// Curlew — expecting an engine call to fail, and getting its error to check.

import CurlewEngine
import HTTPTypes
import Testing

/// Expects `operation` to throw a TransportError and returns it.
package func transportError<Result>(
    _ operation: () async throws -> Result, sourceLocation: SourceLocation = #_sourceLocation
) async -> TransportError? {
    do {
        let result = try await operation()
        let got = (result as? TransportResponse).map { "status \($0.status.code)" } ?? "\(result)"
        Issue.record("expected a TransportError, got \(got)", sourceLocation: sourceLocation)
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        Issue.record("expected a TransportError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
