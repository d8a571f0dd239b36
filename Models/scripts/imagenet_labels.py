"""ImageNet-1k class names, read from the data files shipped in the `timm` wheel.

`timm/data/_info/imagenet_synsets.txt` lists the 1000 WordNet synset ids in
the standard ILSVRC-2012 class order (sorted ids, index 0 = n01440764 tench);
`imagenet_synset_to_lemma.txt` maps each id to its comma-separated lemmas.
We use the first lemma as the display name ("tench", "tabby", "military
uniform"), like MediaPipe's own EfficientNet-Lite label files. Two names occur
twice because WordNet has two senses: "crane" (bird 134, machine 517) and
"maillot" (638, 639).

timm is NOT imported (that would import torch); the files are located through
the installed distribution's metadata.
"""
from __future__ import annotations

import importlib.metadata
from typing import List, Tuple


def _info_file(name: str) -> str:
    dist = importlib.metadata.distribution("timm")
    path = dist.locate_file(f"timm/data/_info/{name}")
    if not path.exists():
        raise FileNotFoundError(path)
    return str(path)


def load_synsets_and_lemmas() -> List[Tuple[str, str]]:
    with open(_info_file("imagenet_synsets.txt")) as f:
        synsets = [l.strip() for l in f if l.strip()]
    lemmas = {}
    with open(_info_file("imagenet_synset_to_lemma.txt")) as f:
        for line in f:
            wnid, _, lemma = line.rstrip("\n").partition("\t")
            lemmas[wnid] = lemma
    if len(synsets) != 1000:
        raise ValueError(f"expected 1000 synsets, got {len(synsets)}")
    return [(s, lemmas[s]) for s in synsets]


def load_labels() -> List[str]:
    return [lemma.split(",")[0].strip() for _, lemma in load_synsets_and_lemmas()]


if __name__ == "__main__":
    labels = load_labels()
    print(len(labels), labels[:3], labels[281:286], labels[652])
