public String tokenDigest(String token) throws NoSuchAlgorithmException {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    return HexFormat.of().formatHex(md.digest(token.getBytes(StandardCharsets.UTF_8)));
}
