"""Trained models in the window: ``wiring`` points the window at a trained model and back,
``room`` holds the trained model's studio and views, ``model_panel`` the panel that picks a
model, a layer and what to do to the selected head, ``model_worker`` the thread that loads
and runs it. The computing is ``attn_studio.trained``'s; this room only draws and asks.
"""
