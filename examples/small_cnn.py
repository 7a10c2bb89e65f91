"""A small convolutional network learns to tell vertical bars from horizontal ones:
Conv2d, ReLU, MaxPool2d, AvgPool2d, Flatten, Linear, cross-entropy and SGD with
momentum, on seeded images. Float32 (the default), so its numbers are compared within
the float32 tolerance (tests/test_examples.py), printed to 6 places so that a last
digit rounded the other way stays within it."""

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
n = 64
labels = torch.randint(0, 2, (n,))
vertical = torch.zeros(8, 8)
vertical[:, 3:5] = 1.0
horizontal = vertical.t()
is_vertical = labels.float().view(n, 1, 1, 1)
images = 0.5 * torch.randn(n, 1, 8, 8) + is_vertical * vertical + (1 - is_vertical) * horizontal

model = nn.Sequential(
    nn.Conv2d(1, 4, kernel_size=3, padding=1),  # 8x8 -> 8x8
    nn.ReLU(),
    nn.MaxPool2d(2),  # -> 4x4
    nn.Conv2d(4, 8, kernel_size=3),  # -> 2x2
    nn.ReLU(),
    nn.AvgPool2d(2),  # -> 1x1
    nn.Flatten(),
    nn.Linear(8, 2),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for step in range(31):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(step, f"{loss.item():.6f}")

with torch.no_grad():
    predicted = model(images).argmax(dim=1)
print("accuracy:", f"{(predicted == labels).float().mean().item():.4f}")
out = model[0](images[:2])
print("conv node:", out.grad_fn.name(), [type(f).__name__ for f, _ in out.grad_fn.next_functions])
print("saved:", out.grad_fn._saved_stride, out.grad_fn._saved_padding, out.grad_fn._saved_groups)
pooled = model[2](out)
print("pool node:", pooled.grad_fn.name(), pooled.grad_fn._saved_kernel_size)
print("first filter, first row:", [f"{v:.6f}" for v in model[0].weight[0, 0, 0].tolist()])
