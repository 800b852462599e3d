public SessionState readSession(byte[] data) throws IOException {
    return MAPPER.readValue(data, SessionState.class);
}
