protected void writeGreeting(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String name = request.getParameter("name");
    response.getWriter().println("<p>Hello, " + name + "</p>");
}
