public String fetchRates(RestTemplate rest, String provider) {
    String base = RATE_PROVIDERS.get(provider);
    if (base == null) {
        throw new IllegalArgumentException("unknown provider");
    }
    return rest.getForObject(base + "/rates/latest", String.class);
}
