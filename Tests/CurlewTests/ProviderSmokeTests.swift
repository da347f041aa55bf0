// Curlew — provider tests.
