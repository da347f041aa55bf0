// Curlew — the engine's vocabulary is part of Curlew's API.

@_exported public import CurlewEngine
@_exported public import HTTPTypes
