# A lesson's stepper cell as a marimo notebook (marimo shows anywidget widgets only,
# through mo.ui.anywidget). Driven by tests/browser/test_marimo_stepper.py.
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

    import minigrad as torch
    from widgets import BackwardStepper

    return BackwardStepper, mo, torch


@app.cell
def _(BackwardStepper, mo, torch):
    a = torch.tensor([0.5, 1.0], requires_grad=True)
    b = torch.tensor([2.0, -1.0], requires_grad=True)
    c = a * b
    loss = (c.exp() + a).sum()
    stepper = mo.ui.anywidget(BackwardStepper(loss, names={"a": a, "b": b, "c": c}))
    stepper  # noqa: B018 (a cell shows its last expression)
    return (stepper,)


@app.cell
def _(mo, stepper):
    mo.md(f"python sees step {stepper.widget.index}: {stepper.value['index']}")
    return


if __name__ == "__main__":
    app.run()
