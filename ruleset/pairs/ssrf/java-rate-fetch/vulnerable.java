public String fetchRates(RestTemplate rest, String providerUrl) {
    return rest.getForObject(providerUrl + "/rates/latest", String.class);
}
