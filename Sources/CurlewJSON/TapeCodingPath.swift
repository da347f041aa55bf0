// Curlew — coding paths kept as nodes in an append-only arena instead of an array per value.

/// A coding key the decoder makes itself: array positions, `super`, and raw object keys.
struct TapeCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    /// The key of an array element, named as JSONDecoder names it ("Index 3").
    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    /// The key of `superDecoder()`.
    static let superKey = TapeCodingKey(stringValue: "super")
}

/// One step of a coding path.
enum PathComponent {
    /// An object member, by the key the caller asked for.
    case key(any CodingKey)
    /// An array element, by position.
    case index(Int)

    /// The step as a coding key.
    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): TapeCodingKey(index: index)
        }
    }
}

/// A coding path is a chain of nodes in ``TapeDocument/paths``; node 0 is the empty root path.
///
/// Nodes are only appended (a container or decoder that escapes its `init(from:)` keeps a valid
/// path) and cost no allocation once the arena has grown; the `[CodingKey]` array is built only when
/// somebody asks for it — mostly for an error.
struct PathNode {
    /// The node this one extends.
    let parent: UInt32
    /// The step; nil only for the root.
    let component: PathComponent?
}

extension TapeDocument {
    /// The root path's node.
    static let rootPath: UInt32 = 0

    /// A new node extending `parent` by `component` (or `parent` itself when there is no component).
    @inline(__always)
    func path(_ parent: UInt32, appending component: PathComponent?) -> UInt32 {
        guard let component else { return parent }
        paths.append(PathNode(parent: parent, component: component))
        return UInt32(paths.count - 1)
    }

    /// The coding path of `node`, optionally extended by `component`.
    func codingPath(_ node: UInt32, appending component: PathComponent? = nil) -> [any CodingKey] {
        var reversed: [any CodingKey] = []
        if let component { reversed.append(component.codingKey) }
        var current = node
        while current != Self.rootPath {
            let step = paths[Int(current)]
            if let component = step.component { reversed.append(component.codingKey) }
            current = step.parent
        }
        return reversed.reversed()
    }
}
