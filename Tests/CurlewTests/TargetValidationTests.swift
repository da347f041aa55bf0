// Curlew — a target's validation accepts exactly the status codes its `statusCodes` lists.

@testable import Curlew
import Testing

@Suite struct TargetValidationTests {
    /// `accepts` (which the provider validates with, building no array) agrees with `statusCodes`: a code
    /// passes when listed, or always when nothing is listed.
    @Test(arguments: [
        ValidationType.none, .successCodes, .successAndRedirectCodes, .customCodes([]), .customCodes([418]),
        .customCodes([200, 204, 304]),
    ])
    func acceptsWhatStatusCodesLists(validation: ValidationType) {
        let codes = validation.statusCodes
        for code in 0...999 {
            #expect(validation.accepts(code) == (codes.isEmpty || codes.contains(code)), "code \(code)")
        }
    }
}
