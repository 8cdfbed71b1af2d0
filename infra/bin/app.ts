import { createServiceApp } from '../stacks/service-app';

createServiceApp().app.synth();
