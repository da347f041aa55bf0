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
            dependencies: [.product(name: "Curlew", package: "Curlew")],
            path: "Sources/engine-load"
        ),
    ],
    swiftLanguageModes: [.v6]
)
