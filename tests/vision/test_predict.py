"""The models' probabilities without scikit-learn's checks are its own, to the bit."""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import VotingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from companion.vision.predict import probabilities


def data(classes: int, dtype=np.float32):
    rng = np.random.default_rng(classes)
    x = rng.normal(0, 1, (600, 6)).astype(dtype) * [1, 5, 0.1, 2, 1, 3]
    y = (np.abs(x[:, 0] * 3 + x[:, 1]) * classes / 12).astype(int) % classes
    return x, y


def network(seed: int = 0):
    return make_pipeline(StandardScaler(), MLPClassifier((8, 4), max_iter=60, random_state=seed))


@pytest.mark.parametrize("classes", [2, 3, 7, 9])   # logistic output; softmax below and above 8
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_network_gives_predict_probas_bits(classes, dtype):
    x, y = data(classes, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = network().fit(x, y)
    assert np.array_equal(probabilities(model, x), model.predict_proba(x))


def test_a_logistic_regression_and_a_soft_vote_give_predict_probas_bits():
    x, y = data(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        logistic = make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y)
        vote = VotingClassifier([("a", network(0)), ("b", network(1))], voting="soft").fit(x, y)
    for model in (logistic, vote):
        assert np.array_equal(probabilities(model, x), model.predict_proba(x))
