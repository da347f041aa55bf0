// Curlew — an arbitrary error's own message, without linking all of Foundation.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The message an error gives about itself, as `localizedDescription` would give it.
///
/// `localizedDescription` lives in full Foundation, which Curlew does not link (it uses
/// FoundationEssentials, which has `LocalizedError` but not `NSError`). An `NSError` created by the
/// caller's code is recognised by its runtime type and its localized description read from the stored
/// user info; anything unexpected there falls back to the error's description.
enum ErrorMessage {
    static func text(of error: any Error) -> String {
        if let localized = error as? any LocalizedError, let text = localized.errorDescription { return text }
        if let text = foundationErrorDescription(error) { return text }
        return String(describing: error)
    }

    /// An `NSError`'s `NSLocalizedDescription`, or Foundation's default sentence for it; nil for
    /// errors that are not `NSError`s.
    private static func foundationErrorDescription(_ error: any Error) -> String? {
        var mirror: Mirror? = Mirror(reflecting: error)
        var isFoundationError = false
        var userInfo: [String: Any]?
        // Walk the class hierarchy: a subclass of NSError stores the user info in NSError's part.
        while let current = mirror {
            if String(reflecting: current.subjectType) == "Foundation.NSError" {
                isFoundationError = true
                if let stored = current.children.first(where: { $0.label == "_userInfo" })?.value,
                    case .some(let info) = stored as Any?
                {
                    userInfo = info as? [String: Any]
                }
                break
            }
            mirror = current.superclassMirror
        }
        guard isFoundationError else { return nil }
        if let text = userInfo?["NSLocalizedDescription"] as? String { return text }
        // Foundation's wording when no description was given.
        return "The operation could not be completed. (\(error._domain) error \(error._code).)"
    }
}
