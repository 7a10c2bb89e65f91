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
exclude_patterns = ["_build"]

# Notebooks: show what is stored, run nothing.
nb_execution_mode = "off"
# The live ipywidgets (the steppers) are replaced by frame players by build.py, so the
# widget manager's JavaScript, which would come from a CDN, is never needed.
nb_ipywidgets_js = {}
nb_output_stderr = "show"
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "alabaster"
html_title = "minigrad course"
html_theme_options = {
    "description": "PyTorch's autograd, made visible",
    "page_width": "1180px",
    "sidebar_width": "240px",
    "fixed_sidebar": False,
    "show_relbars": True,
    "show_powered_by": False,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_show_sphinx = False
html_favicon = "favicon.svg"
# Graph pictures at their natural size, scrolling when wider than the column.
html_static_path = ["graphs.css"]
html_css_files = ["graphs.css"]
