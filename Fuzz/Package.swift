// swift-tools-version:6.2
// Curlew's fuzz targets (issue 33): a package of its own, which users never build. `make fuzz` builds it with
// libFuzzer and AddressSanitizer (`-sanitize=fuzzer,address`, every module instrumented for coverage) and
// with testing enabled, so the targets reach the engine's internal parsers through `@testable import`.
// Each target is an executable whose `main` runs libFuzzer's driver (FuzzSupport); its oracle stops the
// run on a broken rule.
import PackageDescription

/// A fuzz target: an executable on the engine, with the shared entry point and verdict.
func fuzzTarget(_ name: String, needsHTTPTypes: Bool = false, also: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "CurlewEngine", package: "Curlew")]
            + (needsHTTPTypes ? [.product(name: "HTTPTypes", package: "swift-http-types")] : []) + also)
}

let package = Package(
    name: "CurlewFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Curlew", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["FuzzDriver"]),
        fuzzTarget("FuzzResponseHead", needsHTTPTypes: true),
        fuzzTarget("FuzzEventStream"),
        fuzzTarget("FuzzFilename", needsHTTPTypes: true),
        fuzzTarget("FuzzContentDecoder"),
        fuzzTarget("FuzzJSON", also: [.product(name: "Curlew", package: "Curlew")]),
        fuzzTarget(
            "FuzzMultipart",
            also: [.product(name: "Curlew", package: "Curlew"), .product(name: "MultipartKit", package: "multipart-kit")]),
        fuzzTarget("FuzzURL", needsHTTPTypes: true, also: [.product(name: "Curlew", package: "Curlew")]),
    ],
    swiftLanguageModes: [.v6]
)
