def greet(request):
    from flask import render_template_string
    name = request.args.get("name", "guest")
    return render_template_string("<h1>Hello " + name + "</h1>")
