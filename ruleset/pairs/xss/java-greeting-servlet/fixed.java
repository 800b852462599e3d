protected void writeGreeting(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String name = StringEscapeUtils.escapeHtml4(request.getParameter("name"));
    response.getWriter().println("<p>Hello, " + name + "</p>");
}
