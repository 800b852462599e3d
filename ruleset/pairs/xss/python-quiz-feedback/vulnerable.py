def feedback_html(feedback):
    from django.utils.html import format_html
    from django.utils.safestring import mark_safe
    return mark_safe("<div class='feedback'>%s</div>" % feedback.text)
