"""Automatic differentiation, step by step: a one-layer logistic model, its graph,
its gradients, and the ways to stop tracking (the ideas of PyTorch's autograd
tutorial, written for this course)."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
print("device:", device)

# A tiny model: 5 inputs, 3 outputs, and a target for each output.
x = torch.ones(5, device=device)
target = torch.tensor([0.0, 1.0, 0.0], device=device)
w = torch.randn(5, 3, requires_grad=True, device=device)
b = torch.randn(3, requires_grad=True, device=device)
logits = torch.matmul(x, w) + b
loss = F.binary_cross_entropy_with_logits(logits, target)
print("loss:", round(loss.item(), 6))

# Every result of a tracked op remembers how it was made.
print("logits.grad_fn:", type(logits.grad_fn).__name__)
print("loss.grad_fn:", type(loss.grad_fn).__name__)
print("next:", [type(fn).__name__ for fn, _ in loss.grad_fn.next_functions if fn is not None])

loss.backward()
print("w.grad:", w.grad.numpy().round(6).tolist())
print("b.grad:", b.grad.numpy().round(6).tolist())
print("w.grad version:", w.grad._version, "is_leaf:", w.grad.is_leaf)

# Turning tracking off: no_grad for a block, detach for one tensor.
with torch.no_grad():
    frozen = torch.matmul(x, w) + b
print("inside no_grad:", frozen.requires_grad)
detached = (torch.matmul(x, w) + b).detach()
print("detached:", detached.requires_grad, detached.grad_fn)

# A second backward needs the graph kept; gradients add up in .grad.
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print("first:", inp.grad.sum().item())
out.backward(torch.ones_like(out), retain_graph=True)
print("second (accumulated):", inp.grad.sum().item())
inp.grad.zero_()
out.backward(torch.ones_like(out))
print("after zero_:", inp.grad.sum().item())
try:
    out.backward(torch.ones_like(out))
except RuntimeError as error:
    print("third:", str(error).split(".")[0])
