"""The trained models' class probabilities, without scikit-learn's checks on every call.

`predict_proba` validates and copies its input at every step of a pipeline
(the scaler, the network) and, for a vote, in every member: on a frame's
dozen cards that costs several times the arithmetic, and on the learnt map's
100k pixels a third as much again.  The models `companion train` writes are
of a few known shapes (a scaler and a network or a logistic regression, or a
soft vote of such pipelines); for those, the same operations are done here
in scikit-learn's own order and dtypes, so the probabilities are the same to
the bit.  Anything else goes through `predict_proba`.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit


def probabilities(model, x: np.ndarray) -> np.ndarray:
    """`model.predict_proba(x)`, bit for bit."""
    if _vote_of_known(model, x):   # VotingClassifier.predict_proba: the members' mean
        return np.average(np.asarray([_pipeline(m, x) for m in model.estimators_]), axis=0, weights=None)
    if _known(model, x):
        return _pipeline(model, x)
    return model.predict_proba(x)


def _steps(model):
    return [step for _, step in getattr(model, "steps", ())]


def _network(step) -> bool:
    from sklearn.neural_network import MLPClassifier
    return type(step) is MLPClassifier


def _known(model, x: np.ndarray) -> bool:
    """Whether `model` is a scaler and a relu network or a two-class logistic regression,
    and `x` a 2-d float array (which the checks would pass unchanged)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    steps = _steps(model)
    if len(steps) != 2 or type(steps[0]) is not StandardScaler or not steps[0].with_mean or \
            not steps[0].with_std or not isinstance(x, np.ndarray) or x.ndim != 2 or \
            x.dtype not in (np.float32, np.float64):
        return False
    last = steps[1]
    if _network(last):
        return last.activation == "relu" and last.out_activation_ in ("logistic", "softmax")
    return type(last) is LogisticRegression and len(last.classes_) == 2


def _vote_of_known(model, x: np.ndarray) -> bool:
    from sklearn.ensemble import VotingClassifier
    return type(model) is VotingClassifier and model.voting == "soft" and model.weights is None and \
        all(_known(m, x) for m in model.estimators_)


def _scaled(scaler, x: np.ndarray) -> np.ndarray:
    """StandardScaler.transform (on a copy)."""
    out = x - scaler.mean_.astype(x.dtype)
    out /= scaler.scale_.astype(x.dtype)
    return out


def _forward(network, a: np.ndarray) -> np.ndarray:
    """MLPClassifier._forward_pass_fast: the output layer's activation."""
    last = len(network.coefs_) - 1
    for i, (coef, intercept) in enumerate(zip(network.coefs_, network.intercepts_)):
        a = a @ coef
        a += intercept
        if i != last:
            np.maximum(a, 0, out=a)
    if network.out_activation_ == "logistic":
        expit(a, out=a)
        return a
    return _softmax(a)


def _softmax(a: np.ndarray) -> np.ndarray:
    """scikit-learn's inplace_softmax.  With fewer than eight classes numpy sums each row's
    numbers one after another, so doing it a class at a time over all rows gives the same
    bits, several times faster over the learnt map's 100k pixels (its rows are three long)."""
    if a.shape[1] >= 8:
        tmp = a - a.max(axis=1)[:, np.newaxis]
        np.exp(tmp, out=a)
        a /= a.sum(axis=1)[:, np.newaxis]
        return a
    classes = np.ascontiguousarray(a.T)
    top = classes[0].copy()
    for c in classes[1:]:
        np.maximum(top, c, out=top)
    classes -= top
    np.exp(classes, out=classes)
    total = classes[0].copy()
    for c in classes[1:]:
        total += c
    classes /= total
    return np.ascontiguousarray(classes.T)


def _pipeline(model, x: np.ndarray) -> np.ndarray:
    """predict_proba of a `_known` pipeline."""
    scaler, last = _steps(model)
    a = _scaled(scaler, x)
    if _network(last):
        y = _forward(last, a)
        if last.n_outputs_ == 1:   # MLPClassifier.predict_proba of two classes
            y = y.ravel()
            return np.vstack([1 - y, y]).T
        return y
    # LogisticRegression of two classes: the decision function through the logistic
    p = (a @ last.coef_.T + last.intercept_).reshape(-1)
    expit(p, out=p)
    return np.stack([1 - p, p], axis=1)
