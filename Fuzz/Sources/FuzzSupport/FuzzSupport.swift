// What every fuzz target shares: the entry point's call into libFuzzer, and the oracle's verdict.

import FuzzDriver
import Glibc

/// A target's test: one input; returns 0.
public typealias FuzzTest = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's driver with `test`. SwiftPM names an executable's entry point `<Target>_main` and
/// points `main` at it, so each target defines that function and calls this (libFuzzer's own `main` is
/// not used).
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ test: FuzzTest
) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, test)
}

/// Stops the run with `message` when `condition` is false: the oracle's verdict (printed, unlike a
/// precondition's message in an optimised build).
public func expect(_ condition: Bool, _ message: @autoclosure () -> String = "") {
    if !condition { expectationFailed(message()) }
}

/// Stops the run with `message`.
public func expectationFailed(_ message: String) -> Never {
    let line = "oracle: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    abort()
}

/// `text` as a JSON string (control characters, quote and backslash escaped; the rest as UTF-8), or
/// `null`: the dump modes' records, read by the comparison scripts.
public func jsonString(_ text: String?) -> String {
    guard let text else { return "null" }
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            let code = String(scalar.value, radix: 16)
            result += "\\u" + String(repeating: "0", count: 4 - code.count) + code
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}
