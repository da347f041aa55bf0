// Curlew — the demo walk-through (`make demo`).
import Curlew
