protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String name = request.getParameter("file");
    Path base = Paths.get("/srv/records/").toRealPath();
    Path file = base.resolve(name).normalize();
    if (!file.startsWith(base)) {
        response.sendError(400);
        return;
    }
    Files.copy(file, response.getOutputStream());
}
