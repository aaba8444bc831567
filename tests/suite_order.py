"""The order the suite runs its modules in (tests/conftest.py sorts the collected tests by it)."""

# The suite's longest modules, longest first (each module runs whole on one worker: ``--dist loadfile``).
# They are run first, and the many short modules after them, so that the two workers finish together
# instead of one running a long module alone at the end (xdist's own order, most tests first, put the
# one-test modules, some of the longest, last). Their tests are marked ``slow`` too: they run in CI like
# every test, and ``python -m pytest -m "not slow"`` leaves them out for a quick run. A new module that
# the ``--durations`` print shows among the slowest belongs here; tests/test_suite_order.py checks that
# every name here is a module.
SLOW_FIRST = (
    # First: its first walk trains the induction run of seed 0 to 2,000 steps for the session's shared runs
    # (tests/shared_runs.py), which the ablation, the lab's panels and the lecture's scenes read afterwards.
    "tests/gui/test_lecture_clicker.py",  # the example lecture played on three projectors
    "tests/cli/test_readme_commands.py",  # the README's exports: a process each (the lectures', a hand-out)
    "tests/training/test_ablation.py",  # seeds 1 and 2 trained to 1,800 steps (seed 0 shared, asked for last)
    "tests/cli/test_readme_train_commands.py",  # the README's other training runs (seq2seq 2,000 steps)
    "tests/cli/test_readme_induction_command.py",  # the README's induction runs, 2,000 and 1,800 steps
    "tests/gui/test_lecture_handout_example.py",  # the example's hand-out: 600 + 2,000 training steps
    "tests/gui/test_lecture_ablation_scene.py",  # the ablation scene trains its run on the stage
    "tests/gui/test_export_trained_page.py",
    "tests/gui/test_window_1280.py",
    "tests/gui/test_lab_figures.py",
    "tests/gui/test_found_by_random_use.py",
    "tests/cli/test_cli_animate.py",
    "tests/gui/test_no_text_over_text.py",
    "tests/gui/test_trained_window.py",
    "tests/cli/test_cli_pictures.py",
    "tests/gui/test_random_use.py",
    "tests/gui/test_window_zoom_fit.py",
    "tests/gui/test_precision_walk.py",
    "tests/cli/test_cli_trained_edits.py",
    "tests/gui/test_window_laptop.py",
    "tests/gui/test_collector.py",
    "tests/gui/test_export_vector_steps.py",
    "tests/gui/test_training_lab.py",
    "tests/gui/test_export_steps.py",
    "tests/gui/test_lecture_handout.py",
    "tests/gui/test_lecture_scenes.py",
    "tests/gui/test_window_docks_fit.py",
    "tests/gui/test_animation_window.py",
    "tests/hostile/test_hostile_inputs.py",
    "tests/cli/test_cli_trained.py",
    "tests/gui/test_export_page.py",
    "tests/gui/test_background_save.py",
    "tests/gui/test_unsaved_asked.py",
    "tests/gui/test_lecture_views.py",
    "tests/gui/test_lecture_files.py",
)
