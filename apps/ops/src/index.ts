export { runOps } from './main';
