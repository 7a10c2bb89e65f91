"""Sphinx settings of the static course site (`make site`; sources made by build.py).

Built offline: notebooks are never executed (their stored outputs are shown), and
nothing is loaded from the network (no widget manager, no web fonts, no CDN).
"""

project = "minigrad course"
author = "the minigrad course authors"
copyright = "the minigrad course authors"

extensions = ["myst_nb"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
master_doc = "index"
# notebooks/: the copies of the repository's notebooks the lesson pages link to (build.py),
# downloads, not pages.
exclude_patterns = ["_build", "notebooks"]

# Notebooks: show what is stored, run nothing.
nb_execution_mode = "off"
# The live widgets (the steppers) are replaced by build.py with the stepper drawn from its
# saved state by the course's own loader, so the widget manager's JavaScript, which would
# come from a CDN, is never needed.
nb_ipywidgets_js = {}
nb_output_stderr = "show"
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# A theme made for books and courses: the lessons in a left sidebar, each page's
# sections on the right. Its fonts and icons ship with it; no launch, repository or
# download buttons (they would point off the site, or at the build's own sources).
html_theme = "sphinx_book_theme"
LESSON_PAGES = "[0-9][0-9]_*"
html_title = "minigrad course"
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "use_source_button": False,
    "navigation_with_keys": False,
    "show_navbar_depth": 1,
    # Lesson pages: no right sidebar, so the steppers get the page's width (at 1400 px
    # the three columns left a lesson 770 px); their contents go in the left sidebar.
    # (Pages no pattern names get no right sidebar; one page under two wildcards warns.)
    "secondary_sidebar_items": {"index": ["page-toc.html"], "instructor": ["page-toc.html"],
                                LESSON_PAGES: []},
}
html_sidebars = {
    LESSON_PAGES: ["navbar-logo.html", "icon-links.html", "search-button-field.html",
                   "sbt-sidebar-nav.html", "page-toc.html"],
}
# Light unless the reader picks dark (the theme otherwise logs an error on a first visit).
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_show_sphinx = False
html_favicon = "favicon.svg"
# Graph pictures at their natural size, scrolling when wider than the column.
html_static_path = ["graphs.css"]
html_css_files = ["graphs.css"]
