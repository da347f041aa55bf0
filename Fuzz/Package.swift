// swift-tools-version:6.2
// Curlew's fuzz targets (issue 33): a package of its own, which users never build. `make fuzz` builds it with
// libFuzzer and AddressSanitizer (`-sanitize=fuzzer,address`, every module instrumented for coverage) and
// with testing enabled, so the targets reach the engine's internal parsers through `@testable import`.
// Each target is an executable whose `main` is libFuzzer's; its oracle traps on a broken rule.
import PackageDescription

let package = Package(
    name: "CurlewFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Curlew", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "FuzzResponseHead",
            dependencies: ["FuzzDriver", .product(name: "CurlewEngine", package: "Curlew"), .product(name: "HTTPTypes", package: "swift-http-types")]),
        .executableTarget(
            name: "FuzzEventStream",
            dependencies: ["FuzzDriver", .product(name: "CurlewEngine", package: "Curlew")]),
        .executableTarget(
            name: "FuzzFilename",
            dependencies: ["FuzzDriver", .product(name: "CurlewEngine", package: "Curlew"), .product(name: "HTTPTypes", package: "swift-http-types")]),
        .executableTarget(
            name: "FuzzContentDecoder",
            dependencies: ["FuzzDriver", .product(name: "CurlewEngine", package: "Curlew")]),
    ],
    swiftLanguageModes: [.v6]
)
