// swift-tools-version:6.2
// Curlew benchmarks: a separate package so the library's own dependency graph stays small.
import PackageDescription

let package = Package(
    name: "CurlewBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Curlew", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "engine-load",
            dependencies: [.product(name: "CurlewEngine", package: "Curlew")],
            path: "Sources/engine-load"
        ),
        .executableTarget(
            name: "engine-cancel",
            dependencies: [.product(name: "CurlewEngine", package: "Curlew")],
            path: "Sources/engine-cancel"
        ),
        .executableTarget(
            name: "provider-load",
            dependencies: [.product(name: "Curlew", package: "Curlew")],
            path: "Sources/provider-load"
        ),
    ],
    swiftLanguageModes: [.v6]
)
