def feedback_html(feedback):
    from django.utils.html import format_html
    from django.utils.safestring import mark_safe
    return format_html("<div class='feedback'>{}</div>", feedback.text)
