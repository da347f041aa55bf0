// Curlew — loopback test server (being written).
