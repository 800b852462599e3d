protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String name = request.getParameter("file");
    File file = new File("/srv/records/", name);
    Files.copy(file.toPath(), response.getOutputStream());
}
