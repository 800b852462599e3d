public String tokenDigest(String token) throws NoSuchAlgorithmException {
    MessageDigest md = MessageDigest.getInstance("MD5");
    return HexFormat.of().formatHex(md.digest(token.getBytes(StandardCharsets.UTF_8)));
}
